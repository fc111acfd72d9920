-- geneva._validate_policy: checks one exception policy of a definition.
--
-- Called by: geneva.define_workflow. Takes no locks.
-- Raises: 22023, naming p_where, for: an unknown key; neither or both of action
-- and handler; an unknown action, terminal action or report value; an empty or
-- malformed matching list; wait, max_reattempts, terminal_action, backoff or
-- max_wait on a policy that is not a reattempt (which includes a handler); a
-- negative or unparsable wait or max_wait; a max_reattempts that is not a
-- non-negative integer or null; a backoff that is not a number from 1 to 100,
-- or without a wait above zero; a max_wait without a backoff.
create or replace function geneva._validate_policy(p_policy jsonb, p_where text)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_key text;
  v_action text := p_policy ->> 'action';
begin
  if jsonb_typeof(p_policy) is distinct from 'object' then
    raise exception '%: a policy must be an object, not %', p_where, p_policy
      using errcode = '22023';
  end if;

  for v_key in select jsonb_object_keys(p_policy) loop
    if v_key not in (
      'action', 'handler', 'matching', 'wait', 'max_reattempts', 'terminal_action', 'report',
      'backoff', 'max_wait'
    ) then
      raise exception '%: unknown policy key "%"', p_where, v_key
        using errcode = '22023',
              hint = 'Policy keys are action, handler, matching, wait, max_reattempts, terminal_action, backoff, max_wait and report.';
    end if;
  end loop;

  if p_policy ? 'handler' then
    if p_policy ? 'action' then
      raise exception '%: a policy has either an action or a handler, not both', p_where
        using errcode = '22023';
    end if;
    if jsonb_typeof(p_policy -> 'handler') is distinct from 'string' or p_policy ->> 'handler' = '' then
      raise exception '%: handler must name a handler', p_where
        using errcode = '22023';
    end if;
    if p_policy ?| array['wait', 'max_reattempts', 'terminal_action', 'backoff', 'max_wait'] then
      raise exception '%: a handler cannot be combined with wait, max_reattempts, terminal_action, backoff or max_wait', p_where
        using errcode = '22023',
              hint = 'Decide waits and limits inside the handler.';
    end if;
  elsif v_action is null then
    raise exception '%: a policy needs an action or a handler', p_where
      using errcode = '22023';
  elsif jsonb_typeof(p_policy -> 'action') <> 'string'
    or v_action not in ('pause', 'cancel', 'skip', 'reattempt') then
    raise exception '%: unknown action %', p_where, p_policy -> 'action'
      using errcode = '22023',
            hint = 'Actions are pause, cancel, skip and reattempt.';
  end if;

  if p_policy ? 'matching' then
    if jsonb_typeof(p_policy -> 'matching') is distinct from 'array'
      or jsonb_array_length(p_policy -> 'matching') = 0
      or exists (
        select 1
        from jsonb_array_elements(p_policy -> 'matching') m
        where jsonb_typeof(m) <> 'string' or m #>> '{}' = ''
      ) then
      raise exception '%: matching must be a non-empty list of error class names', p_where
        using errcode = '22023',
              hint = 'Leave matching out for a blanket policy.';
    end if;
  end if;

  -- (a handler with these keys was refused above)
  if v_action <> 'reattempt'
    and p_policy ?| array['wait', 'max_reattempts', 'terminal_action', 'backoff', 'max_wait'] then
    raise exception '%: wait, max_reattempts, terminal_action, backoff and max_wait apply only to the reattempt action, not %',
      p_where, v_action
      using errcode = '22023';
  end if;

  if p_policy ? 'wait' then
    perform geneva._parse_wait(p_policy -> 'wait', p_where);
  end if;

  if p_policy ? 'backoff'
    and not (
      case
        when jsonb_typeof(p_policy -> 'backoff') = 'number'
          then (p_policy ->> 'backoff')::numeric between 1 and 100
        else false
      end
    ) then
    raise exception '%: backoff must be a number from 1 to 100 (the factor each wait grows by)', p_where
      using errcode = '22023';
  end if;

  if p_policy ? 'backoff' then
    if not p_policy ? 'wait' then
      raise exception '%: a backoff grows the wait; give a wait above zero', p_where
        using errcode = '22023';
    elsif geneva._parse_wait(p_policy -> 'wait', p_where) = interval '0' then
      raise exception '%: a backoff grows the wait; give a wait above zero', p_where
        using errcode = '22023';
    end if;
  end if;

  if p_policy ? 'max_wait' then
    if not p_policy ? 'backoff' then
      raise exception '%: max_wait caps a backoff; give backoff too', p_where
        using errcode = '22023';
    end if;
    perform geneva._parse_wait(p_policy -> 'max_wait', p_where);
  end if;

  if p_policy ? 'max_reattempts' and jsonb_typeof(p_policy -> 'max_reattempts') <> 'null' then
    if jsonb_typeof(p_policy -> 'max_reattempts') <> 'number'
      or (p_policy ->> 'max_reattempts') !~ '^[0-9]{1,9}$' then
      raise exception '%: max_reattempts must be a non-negative integer, or null for no limit', p_where
        using errcode = '22023';
    end if;
  end if;

  if p_policy ? 'terminal_action'
    and (
      jsonb_typeof(p_policy -> 'terminal_action') <> 'string'
      or not exists (
        select from geneva._signal_effects() e
        where e.cause = 'exhausted' and e.signal = p_policy ->> 'terminal_action'
      )
    ) then
    raise exception '%: unknown terminal action %', p_where, p_policy -> 'terminal_action'
      using errcode = '22023',
            hint = format('Terminal actions are %s.', (
              select string_agg(e.signal, ', ') from geneva._signal_effects() e where e.cause = 'exhausted'
            ));
  end if;

  if p_policy ? 'report'
    and (
      jsonb_typeof(p_policy -> 'report') <> 'string'
      or p_policy ->> 'report' not in ('always', 'never', 'terminal_only')
    ) then
    raise exception '%: unknown report value %', p_where, p_policy -> 'report'
      using errcode = '22023',
            hint = 'Report values are always, never and terminal_only.';
  end if;
end;
$$;
