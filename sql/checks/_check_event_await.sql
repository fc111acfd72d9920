-- geneva._check_event_await: validates the event of a step's "await" (not a
-- join's: geneva._check_children_await): "event" is a name, or a non-empty
-- list of distinct names (any of them: the first to come is the step's
-- event), each a non-empty string of at most 255 bytes that does not start
-- with geneva: (the engine's); "since" is "wait" (only events sent after
-- the step is reached count) or "kept" (the default: every event not
-- consumed yet counts, first in, first out).
--
-- Called by: geneva.define_workflow, for an await that names no children.
-- Takes no locks.
-- Raises: 22023, naming p_where, for a missing, empty or non-string name,
-- an empty list, a name listed twice, a reserved name or an unknown since;
-- 22001 for a name over 255 bytes.
create or replace function geneva._check_event_await(p_await jsonb, p_where text)
returns void
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_event jsonb := p_await -> 'event';
  v_name jsonb;
begin
  if jsonb_typeof(v_event) = 'array' then
    if jsonb_array_length(v_event) = 0 then
      raise exception '%: await event is an empty list', p_where
        using errcode = '22023',
              hint = 'List the names of the events the step awaits (any of them), or give one name.';
    end if;
    if (select count(distinct x) from jsonb_array_elements(v_event) x) < jsonb_array_length(v_event) then
      raise exception '%: await event % names an event twice', p_where, v_event using errcode = '22023';
    end if;
  elsif v_event is null or jsonb_typeof(v_event) <> 'string' then
    raise exception '%: await needs the name of an event, or a list of names', p_where using errcode = '22023';
  end if;
  for v_name in
    select x from jsonb_array_elements(case when jsonb_typeof(v_event) = 'array' then v_event else jsonb_build_array(v_event) end) x
  loop
    if jsonb_typeof(v_name) <> 'string' or v_name #>> '{}' = '' then
      raise exception '%: await event % is not the name of an event', p_where, v_name
        using errcode = '22023',
              hint = 'Event names are non-empty strings.';
    end if;
    perform geneva._check_length(v_name #>> '{}', 255, p_where || ': await event');
    if v_name #>> '{}' like 'geneva:%' then
      raise exception '%: await event %: names that start with geneva: are the engine''s', p_where, v_name #>> '{}'
        using errcode = '22023';
    end if;
  end loop;
  if p_await ? 'since'
    and (jsonb_typeof(p_await -> 'since') <> 'string' or p_await ->> 'since' not in ('wait', 'kept')) then
    raise exception '%: await since % is not wait or kept', p_where, p_await -> 'since'
      using errcode = '22023',
            hint = 'since "wait" counts only the events sent after the step is reached; "kept" (the default) every one not consumed yet.';
  end if;
end;
$$;
