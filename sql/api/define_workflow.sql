-- geneva.define_workflow: registers a workflow type, or replaces its definition.
--
-- Called by: the Go worker at start-up for each of its workflow types; any SQL
-- client for other languages. Workflows already running follow the new step
-- list from their next transition on.
--
-- The definition (docs/sql-api.md) lists the steps in run order, each with its
-- name and optional wait, after (an offset from the workflow's start: the
-- step is due no earlier than its created_at plus it, the later of that and
-- its wait; an interval or seconds, as a wait), skip_if, on_exception and
-- await (an event the step
-- waits for after its wait: {"event": name, "timeout": interval or seconds,
-- "on_timeout": run (default), cancel, pause or skip}); and optional top-level
-- on_exception, queue (default 'default'), priority (1-4, default 1),
-- may_proceed_without_hero, cancel_if (names of the worker's conditions,
-- kept for operators to read), concurrency ({"by": group, hero, type or parent,
-- "limit": N}) and rate_limit (the same with "per": a window), per step
-- limits (names of geneva.define_limit's) and idempotency_ttl (how long
-- create_workflow's p_idempotency_key returns the first workflow: an
-- interval or seconds, 0 to 100 years, default 24 hours) and cancel_on (names
-- of events that cancel a workflow of the type: geneva._send_event). An
-- await's "event" may be a list (any of them) and its "since" wait or kept
-- (geneva._check_event_await). Re-registering an identical definition writes
-- nothing.
--
-- A step with "http" (geneva._validate_http) is an HTTP step: the stock
-- `geneva worker` runs it by calling its endpoint, and its River jobs go to
-- its http queue (default geneva_http), not the type's, so that Go workers
-- never fetch it. A definition whose every step is HTTP may be defined by
-- operators (deployers: granted to the operator role); one with a Go step
-- only by a role that may claim steps (the worker role), which alone may
-- also replace a type whose current definition has a Go step. Every new or
-- changed definition is kept, numbered, in
-- geneva.workflow_definition_versions (with session_user), the latest 100
-- of a type (older ones are deleted as a new one is written; the action log
-- has each change too); workflows follow the current one. A definition is
-- at most 1 MiB (as its jsonb text).
--
-- Locks: the definition row (upsert); deletes the type's versions past the
-- latest 100; on a new or changed definition, the stripes of the type's
-- parents whose partial_join changes (geneva.children_stripes), then the
-- type's ongoing workflows (in id order), whose definition_version becomes
-- the new version. Records the action (geneva._log_action)
-- when it writes: a new or changed definition, not a worker's start-up
-- registering the same one again.
-- Raises: 22004 for a NULL argument; 22001 for a definition over 1 MiB;
-- 22023 for a bad type name or definition
-- (unknown keys, no steps key, steps not a list, more than 1000 steps, a
-- step without a name,
-- duplicate step names, a bad wait, after or skip_if, an await without an event
-- name or a timeout, with an unknown key, on_timeout or since, a bad list of
-- events (geneva._check_event_await), or a timeout over
-- 100 years, any bad policy as in
-- geneva._validate_policy, a bad queue, priority, may_proceed_without_hero,
-- cancel_if or cancel_on (not a non-empty list of event names), a bad concurrency or rate_limit (geneva._validate_limit), a
-- step's limits not a list of the names of defined limits, a bad
-- idempotency_ttl, a bad http (headers: at most 32, of 16 KiB together), a
-- named skip_if on an HTTP step); 42501 when
-- a role that may not claim steps defines a type with a Go step, or
-- replaces one whose current definition has one; 22001 for a type name or step name longer than 255 bytes or a
-- queue name longer than 127 (see geneva._check_length).
--
-- The steps key is required; an empty list is legal (a workflow of that type
-- finishes as soon as it is created).
create or replace function geneva.define_workflow(
  p_workflow_type text,
  p_definition jsonb
)
returns void
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_key text;
  v_steps jsonb := p_definition -> 'steps';
  v_step jsonb;
  v_index integer := 0;
  v_where text;
  v_name text;
  v_names text[] := '{}';
  v_waits interval[] := '{}';
  v_timeouts interval[] := '{}';
  v_afters interval[] := '{}';
  v_await jsonb;
  v_policy jsonb;
  -- the queue's and the priority's defaults, written only here: everything
  -- else reads the definition's (and the Go worker's mirror is pinned to
  -- them by worker/defaults_internal_test.go)
  v_queue text := 'default';
  v_priority smallint := 1;
  -- how long create_workflow's idempotency key holds, unless the definition
  -- says (written only here, as the queue's and the priority's)
  v_idempotency_ttl interval := interval '24 hours';
  -- the most steps a type may have: the step list is searched at every
  -- claim of a step, and validated here
  v_max_steps constant integer := 1000;
  -- the largest definition (as its jsonb text), and how many versions of a
  -- type are kept
  v_max_bytes constant integer := 1048576;
  v_versions_kept constant integer := 100;
  v_written integer;
  v_queues text[];
  -- whether a step runs in a Go worker (not "http")
  v_go_steps boolean := false;
  v_version integer;
begin
  if p_workflow_type is null then
    raise exception 'workflow type must not be null' using errcode = '22004';
  end if;
  if p_definition is null then
    raise exception 'definition of % must not be null', p_workflow_type using errcode = '22004';
  end if;
  perform geneva._check_length(p_workflow_type, 255, 'workflow type');
  if p_workflow_type = '' then
    raise exception 'workflow type must not be empty' using errcode = '22023';
  end if;
  if jsonb_typeof(p_definition) <> 'object' then
    raise exception 'definition of % must be a JSON object', p_workflow_type
      using errcode = '22023';
  end if;
  if octet_length(p_definition::text) > v_max_bytes then
    raise exception 'definition of % is too large: % bytes, the limit is 1 MiB', p_workflow_type, octet_length(p_definition::text)
      using errcode = '22001',
            hint = 'Each version is kept, and recorded in the action log.';
  end if;

  -- guard: top-level keys
  for v_key in select jsonb_object_keys(p_definition) loop
    if v_key not in (
      'steps', 'on_exception', 'queue', 'priority', 'may_proceed_without_hero', 'cancel_if',
      'concurrency', 'rate_limit', 'idempotency_ttl', 'cancel_on'
    ) then
      raise exception 'definition of %: unknown key "%"', p_workflow_type, v_key
        using errcode = '22023',
              hint = 'Keys are steps, on_exception, queue, priority, may_proceed_without_hero, cancel_if, concurrency, rate_limit, idempotency_ttl and cancel_on.';
    end if;
  end loop;

  -- guard: steps
  if v_steps is null then
    raise exception 'definition of % has no steps', p_workflow_type
      using errcode = '22023',
            hint = 'List the steps in run order under "steps"; an empty list makes workflows that finish at once.';
  end if;
  if jsonb_typeof(v_steps) <> 'array' then
    raise exception 'definition of %: steps must be a list', p_workflow_type
      using errcode = '22023';
  end if;
  if jsonb_array_length(v_steps) > v_max_steps then
    raise exception 'definition of % has % steps, the limit is %', p_workflow_type, jsonb_array_length(v_steps), v_max_steps
      using errcode = '22023',
            hint = 'A workflow type has at most 1000 steps; split a longer process into workflows, or loop with a resumable step.';
  end if;

  for v_step in select s from jsonb_array_elements(v_steps) s loop
    v_where := format('definition of %s: steps[%s]', p_workflow_type, v_index);
    if jsonb_typeof(v_step) <> 'object' then
      raise exception '%: a step must be an object', v_where using errcode = '22023';
    end if;
    for v_key in select jsonb_object_keys(v_step) loop
      if v_key not in ('name', 'wait', 'after', 'skip_if', 'on_exception', 'await', 'limits', 'http') then
        raise exception '%: unknown step key "%"', v_where, v_key
          using errcode = '22023',
                hint = 'Step keys are name, wait, after, skip_if, on_exception, await, limits and http.';
      end if;
    end loop;

    v_name := v_step ->> 'name';
    if jsonb_typeof(v_step -> 'name') is distinct from 'string' or v_name = '' then
      raise exception '%: a step needs a name', v_where using errcode = '22023';
    end if;
    perform geneva._check_length(v_name, 255, v_where || ': step name');
    v_where := format('definition of %s: step %s', p_workflow_type, v_name);
    if v_step ? 'wait' then
      perform geneva._parse_wait(v_step -> 'wait', v_where);
    end if;
    if v_step ? 'after' then
      perform geneva._parse_wait(v_step -> 'after', v_where || ': after');
    end if;

    if v_step ? 'skip_if'
      and jsonb_typeof(v_step -> 'skip_if') not in ('boolean', 'string') then
      raise exception '%: skip_if must be true, false or the name of a condition', v_where
        using errcode = '22023';
    end if;

    if v_step ? 'http' then
      perform geneva._validate_http(v_step -> 'http', v_where);
      -- the stock worker runs no condition of the application's
      if jsonb_typeof(v_step -> 'skip_if') = 'string' then
        raise exception '%: an HTTP step''s skip_if must be true or false', v_where
          using errcode = '22023',
                hint = 'A named condition runs in a Go worker; the worker that runs HTTP steps has none.';
      end if;
    else
      v_go_steps := true;
    end if;

    v_await := v_step -> 'await';
    if v_await is not null then
      if jsonb_typeof(v_await) <> 'object' then
        raise exception '%: await must be an object with event, timeout and on_timeout', v_where
          using errcode = '22023';
      end if;
      for v_key in select jsonb_object_keys(v_await) loop
        if v_key not in ('event', 'children', 'timeout', 'on_timeout', 'since') then
          raise exception '%: unknown await key "%"', v_where, v_key
            using errcode = '22023',
                  hint = 'Await keys are event (or children), since, timeout and on_timeout.';
        end if;
      end loop;
      if v_await ? 'children' then
        perform geneva._check_children_await(v_await, v_where);
        if v_await ? 'since' then
          raise exception '%: await since is for events; a join counts the children it has', v_where
            using errcode = '22023';
        end if;
      else
        perform geneva._check_event_await(v_await, v_where);
      end if;
      if not v_await ? 'timeout' then
        raise exception '%: await needs a timeout', v_where
          using errcode = '22023',
                hint = 'Say how long the step waits for its event ("3 days"), and what then happens (on_timeout).';
      end if;
      perform geneva._parse_wait(v_await -> 'timeout', v_where || ': await timeout');
      if v_await ? 'on_timeout'
        and (jsonb_typeof(v_await -> 'on_timeout') <> 'string'
          or v_await ->> 'on_timeout' not in ('run', 'cancel', 'pause', 'skip')) then
        raise exception '%: await on_timeout % is not run, cancel, pause or skip', v_where, v_await -> 'on_timeout'
          using errcode = '22023';
      end if;
    end if;
    if v_step ? 'limits' then
      if jsonb_typeof(v_step -> 'limits') <> 'array'
        or exists (select from jsonb_array_elements(v_step -> 'limits') l where jsonb_typeof(l) <> 'string') then
        raise exception '%: limits must be a list of limit names', v_where using errcode = '22023';
      end if;
      select l.name into v_name
      from jsonb_array_elements_text(v_step -> 'limits') as l (name)
      where not exists (select from geneva.limits x where x.name = l.name)
      limit 1;
      if found then
        raise exception '%: unknown limit %', v_where, v_name
          using errcode = '22023',
                hint = 'Define it first with geneva.define_limit.';
      end if;
      v_name := v_step ->> 'name';
    end if;
    v_policy := v_step -> 'on_exception';
    if jsonb_typeof(v_policy) = 'array' then
      perform geneva._validate_policy(p.policy, format('%s: on_exception[%s]', v_where, p.n - 1))
      from jsonb_array_elements(v_policy) with ordinality as p(policy, n);
    elsif v_policy is not null then
      perform geneva._validate_policy(v_policy, v_where || ': on_exception');
    end if;

    v_index := v_index + 1;
  end loop;

  -- the step list, and its waits, in one pass each; a duplicate name, the
  -- first one that repeats an earlier one (a hash, not a search per step:
  -- validation stays linear in the number of steps)
  select coalesce(array_agg(s.step ->> 'name' order by s.n), '{}'),
    coalesce(array_agg(
      case when s.step ? 'wait' then geneva._parse_wait(s.step -> 'wait', '') else interval '0' end
      order by s.n
    ), '{}'),
    coalesce(array_agg(
      case when s.step ? 'await' then geneva._parse_wait(s.step -> 'await' -> 'timeout', '') end
      order by s.n
    ), '{}'),
    -- (NULL when no step has an "after": a workflow's move then reads no
    -- offset, nor its created_at: geneva._advance_many; bench/NOTES.md)
    case when bool_or(s.step ? 'after') then array_agg(
      case when s.step ? 'after' then geneva._parse_wait(s.step -> 'after', '') end
      order by s.n
    ) end
  into v_names, v_waits, v_timeouts, v_afters
  from jsonb_array_elements(v_steps) with ordinality as s (step, n);
  select d.name into v_name
  from (
    select s.name, s.n, count(*) over (partition by s.name) as times,
      row_number() over (partition by s.name order by s.n) as nth
    from unnest(v_names) with ordinality as s (name, n)
  ) d
  where d.times > 1 and d.nth = 2
  order by d.n
  limit 1;
  if found then
    raise exception 'definition of %: duplicate step name "%"', p_workflow_type, v_name
      using errcode = '22023';
  end if;

  -- guard: workflow-level policies
  v_policy := p_definition -> 'on_exception';
  v_where := format('definition of %s: on_exception', p_workflow_type);
  if jsonb_typeof(v_policy) = 'array' then
    perform geneva._validate_policy(p.policy, format('%s[%s]', v_where, p.n - 1))
    from jsonb_array_elements(v_policy) with ordinality as p(policy, n);
  elsif v_policy is not null then
    perform geneva._validate_policy(v_policy, v_where);
  end if;

  -- guard: job options and the rest
  if p_definition ? 'queue' then
    perform geneva._check_length(p_definition ->> 'queue', 127, format('definition of %s: queue', p_workflow_type));
    if jsonb_typeof(p_definition -> 'queue') <> 'string'
      or char_length(p_definition ->> 'queue') not between 1 and 127 then
      raise exception 'definition of %: queue must be a name of 1 to 127 characters', p_workflow_type
        using errcode = '22023';
    end if;
    v_queue := p_definition ->> 'queue';
  end if;
  if p_definition ? 'priority' then
    if jsonb_typeof(p_definition -> 'priority') <> 'number'
      or (p_definition ->> 'priority') not in ('1', '2', '3', '4') then
      raise exception 'definition of %: priority must be 1, 2, 3 or 4', p_workflow_type
        using errcode = '22023',
              hint = 'Priorities are River''s: 1 runs first.';
    end if;
    v_priority := (p_definition ->> 'priority')::smallint;
  end if;
  if p_definition ? 'concurrency' then
    perform geneva._validate_limit(p_definition -> 'concurrency', false, format('definition of %s: concurrency', p_workflow_type));
  end if;
  if p_definition ? 'rate_limit' then
    perform geneva._validate_limit(p_definition -> 'rate_limit', true, format('definition of %s: rate_limit', p_workflow_type));
  end if;
  if p_definition ? 'may_proceed_without_hero'
    and jsonb_typeof(p_definition -> 'may_proceed_without_hero') <> 'boolean' then
    raise exception 'definition of %: may_proceed_without_hero must be true or false', p_workflow_type
      using errcode = '22023';
  end if;
  if p_definition ? 'cancel_if'
    and (
      jsonb_typeof(p_definition -> 'cancel_if') <> 'array'
      or exists (
        select 1
        from jsonb_array_elements(p_definition -> 'cancel_if') c
        where jsonb_typeof(c) <> 'string'
      )
    ) then
    raise exception 'definition of %: cancel_if must be a list of condition names', p_workflow_type
      using errcode = '22023';
  end if;

  if p_definition ? 'cancel_on' then
    if (case when jsonb_typeof(p_definition -> 'cancel_on') = 'array'
        then jsonb_array_length(p_definition -> 'cancel_on') = 0 else true end)
      or exists (
        select from jsonb_array_elements(
          case when jsonb_typeof(p_definition -> 'cancel_on') = 'array' then p_definition -> 'cancel_on' else '[]' end
        ) c
        where jsonb_typeof(c) <> 'string' or c #>> '{}' = ''
      ) then
      raise exception 'definition of %: cancel_on must be a non-empty list of event names', p_workflow_type
        using errcode = '22023',
              hint = 'An event of one of these names, sent to a workflow of the type, cancels it (canceled_by_event).';
    end if;
    perform geneva._check_length(c #>> '{}', 255, format('definition of %s: cancel_on event', p_workflow_type))
    from jsonb_array_elements(p_definition -> 'cancel_on') c;
    if exists (select from jsonb_array_elements_text(p_definition -> 'cancel_on') c where c like 'geneva:%') then
      raise exception 'definition of %: cancel_on names an event that starts with geneva: (the engine''s)', p_workflow_type
        using errcode = '22023';
    end if;
  end if;

  if p_definition ? 'idempotency_ttl' then
    v_idempotency_ttl := geneva._parse_wait(
      p_definition -> 'idempotency_ttl', format('definition of %s: idempotency_ttl', p_workflow_type)
    );
  end if;

  -- guard: who may define it. A definition whose every step is HTTP runs no
  -- code of the caller's, and deployers (operators) register it; one with a
  -- Go step is a Go worker's (the role that may claim steps, start_steps),
  -- and so is replacing one: a type a Go worker runs, pointed at another
  -- endpoint, would hand that endpoint the application's events and let it
  -- decide the steps. (session_user: this runs as the owner.)
  if (v_go_steps or exists (
      select from geneva.workflow_definitions d, jsonb_array_elements(d.definition -> 'steps') s
      where d.workflow_type = p_workflow_type and not s ? 'http'
    ))
    and not pg_catalog.has_function_privilege(session_user, 'geneva.start_steps(bigint[], text[])', 'EXECUTE') then
    raise exception 'definition of %: % may define only workflows whose every step is HTTP, and replace only those', p_workflow_type, session_user
      using errcode = '42501',
            hint = 'Steps without "http" run in a Go worker, which registers its own definitions (the worker role).';
  end if;

  -- each step's queue: an HTTP step's own, else the type's
  select coalesce(array_agg(
      case when s.step ? 'http' then coalesce(s.step -> 'http' ->> 'queue', 'geneva_http') else v_queue end
      order by s.n
    ), '{}')
  into v_queues
  from jsonb_array_elements(v_steps) with ordinality as s (step, n);

  -- the only writer of definitions (sql/guards/workflow_definitions_guard.sql)
  perform pg_catalog.set_config('geneva.defining', 'on', true);
  insert into geneva.workflow_definitions as d (
    workflow_type, definition, step_names, step_waits, step_await_timeouts, step_afters, step_queues, queue,
    priority, may_proceed_without_hero, idempotency_ttl, version, created_at, updated_at
  ) values (
    p_workflow_type, p_definition, v_names, v_waits, v_timeouts, v_afters, v_queues, v_queue, v_priority,
    coalesce((p_definition ->> 'may_proceed_without_hero')::boolean, false),
    v_idempotency_ttl, 1, v_now, v_now
  )
  on conflict (workflow_type) do update
  set definition = excluded.definition,
    step_names = excluded.step_names,
    step_waits = excluded.step_waits,
    step_await_timeouts = excluded.step_await_timeouts,
    step_afters = excluded.step_afters,
    step_queues = excluded.step_queues,
    queue = excluded.queue,
    priority = excluded.priority,
    may_proceed_without_hero = excluded.may_proceed_without_hero,
    idempotency_ttl = excluded.idempotency_ttl,
    version = d.version + 1,
    updated_at = excluded.updated_at
  where d.definition is distinct from excluded.definition
  returning d.version into v_version;
  get diagnostics v_written = row_count;
  if v_written > 0 then
    insert into geneva.workflow_definition_versions (workflow_type, version, definition, defined_at, defined_by)
    values (p_workflow_type, v_version, p_definition, v_now, session_user);
    -- the latest versions are kept (each change is in the action log too)
    delete from geneva.workflow_definition_versions v
    where v.workflow_type = p_workflow_type and v.version <= v_version - v_versions_kept;
    -- the stripes of the type's ongoing parents keep whether its join
    -- waits for fewer than all (geneva._partial_join: read by each child's
    -- end with its stripe, geneva._trg_workflows_ended); taken before the
    -- parents' rows, as a child's end takes its stripe before its parent's
    update geneva.children_stripes s
    set partial_join = geneva._partial_join(p_definition)
    from geneva.workflows w
    where w.id = s.parent_id
      and w.workflow_type = p_workflow_type
      and s.partial_join is distinct from geneva._partial_join(p_definition);
    -- the type's ongoing workflows follow the new version from their next
    -- step on: their definition_version says so now (locked in id order, as
    -- every verb of several workflows locks them)
    update geneva.workflows w
    set definition_version = v_version
    from (
      select x.id
      from geneva.workflows x
      where x.workflow_type = p_workflow_type
        and x.finished_at is null and x.canceled_at is null
      order by x.id
      for no key update
    ) o
    where w.id = o.id;
  end if;
  perform pg_catalog.set_config('geneva.defining', '', true);

  if v_written > 0 then
    perform geneva._log_action(
      'define_workflow', null,
      jsonb_build_object('workflow_type', p_workflow_type, 'definition', p_definition), null
    );
  end if;
end;
$$;

comment on function geneva.define_workflow(text, jsonb) is
'Registers or replaces a workflow type''s definition (steps in run order, policies, queue, priority), validating it.';
