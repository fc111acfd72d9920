-- geneva.create_workflows: creates a workflow of one type for each of a list
-- of heroes, in one call, and schedules each one's first step (or finishes
-- them at once when the type has no steps). The one implementation of a
-- workflow's creation, set-wise: geneva.create_workflow is a batch of one
-- (geneva.retry_workflow, a rerun of a workflow from one of its steps,
-- copies its original instead).
-- Runs in the caller's transaction, so the workflows, their first
-- executions and their River jobs commit with the caller's own writes, all
-- or none.
--
-- Called by: applications (any SQL client, goclient's CreateWorkflows),
-- geneva.create_workflow.
-- Locks: inserts only (and an expired idempotency key's row, taken over;
-- with p_parent_id, the parent's row, then the stripes it counts them on:
-- geneva._children_count). A concurrent create for the same type and hero,
-- or with the same type and idempotency key, waits for the first to commit
-- or roll back.
-- Raises: 22004 for a NULL argument or a NULL hero id; 22023 for an empty
-- hero type or hero id, for p_groups or p_idempotency_keys of another
-- length than p_hero_ids, for an array of more than one dimension or not
-- numbered from 1; 22001 for a workflow type or hero type longer than
-- 255 bytes or a hero id longer than 1024 (see geneva._check_length), before
-- anything is written; WF001 for an unknown workflow type; 23505
-- (constraint workflows_one_ongoing_per_hero) when a hero already has an
-- ongoing workflow of this type, or appears twice in the list, and
-- p_allow_multiple is false (nothing is created: the message names the
-- first such hero); 22023 for a p_trace_context that is not a W3C
-- traceparent; 22023 for an empty group, 22001 for one over 255 bytes;
-- 22023 for an empty idempotency key, 22001 for one over 255 bytes; 40001
-- under repeatable read or serializable when a rival's create with the same
-- key committed after this transaction's snapshot (retry the transaction:
-- it returns the rival's workflow); P0002 for an unknown p_parent_id, 55000
-- for a parent that has ended; 22023 for p_skip_ongoing with
-- p_allow_multiple or p_idempotency_keys; 22023 for p_child_keys without
-- p_parent_id, with p_idempotency_keys, of another length than p_hero_ids
-- or with an empty key, 22001 for a key over 255 bytes.
--
-- Returns the workflows' ids in the order of p_hero_ids: the new ones in
-- ascending order, and for a hero whose idempotency key was given before
-- (within its TTL, or earlier in the same list) the first workflow's; NULL
-- for a hero skipped (p_skip_ongoing) and for a child key taken
-- (p_child_keys).
--
-- p_parent_id: the workflows are children of that workflow (docs/children.md):
-- counted on its row (children) and its stripes (geneva._children_count),
-- under its row lock, so that its join
-- ("await": {"children": …}) counts them; canceling it cancels them. P0002
-- for an unknown parent, 55000 for one that has ended (finished or
-- canceled); a paused parent may have children.
--
-- p_skip_ongoing: a hero with an ongoing workflow of the type (or appearing
-- again later in the list) is skipped, not refused: NULL at its place in
-- the result, and the others are created (the pattern of a schedule that
-- starts one workflow per eligible hero). 22023 with p_idempotency_keys or
-- p_allow_multiple (a skipped hero's key would name no workflow; with
-- allow_multiple no hero is skipped).
--
-- p_child_keys: each child's key among the parent's children
-- (workflows.child_key; NULL for none, the array or an element): a key that
-- one of the parent's children has already, or that appears earlier in the
-- list, is not created again (NULL at its place in the result), so that a
-- step's children are started once however often the step runs (a running
-- step's children: geneva._start_children). The parent's row lock orders
-- the creations that name the same parent.
--
-- p_groups: each workflow's group (a tenant, an account), shown in the views
-- and the key of the type's limits by group; NULL for none (the array, or an
-- element).
--
-- p_idempotency_keys: each request's own name (an order's id), as
-- create_workflow's p_idempotency_key: a key given for this workflow type
-- within the type's "idempotency_ttl" (define_workflow; default 24 hours)
-- returns the workflow the first call created, ended or not, and creates
-- nothing for that hero; a key given twice in the list creates once. NULL
-- for none (the array, or an element).
--
-- p_trace_context: the W3C traceparent of the request creating the
-- workflows, stored with each (see create_workflow); NULL or '' stores none.
--
-- The workflow rows are inserted as scheduling their first step leaves them
-- (ready, the first step next), so they are written once. The first steps
-- of two or more workflows are scheduled set-wise by one statement here,
-- which writes what geneva._advance_many's move "first" would (its header
-- says what a schedule writes: an execution, and its River job unless it
-- waits behind a limit's key), but draws each job's id from River's
-- sequence, so that the executions name their jobs without reading them
-- back; every value but the ids, the hero and the wait key is the call's
-- own (one type, one step, one wait): a fan-out's 10,000 children, with
-- this and their checks, cost 29% fewer instructions than through
-- _advance_many a hundred at a time (bench/NOTES.md). A first step that awaits an event is scheduled by
-- _advance_many itself, a hundred a call. A single workflow's
-- (create_workflow's) is scheduled by geneva._insert_execution, which
-- costs one row less than the set-wise statement's fixed share. Either
-- way, a first step held to its type's
-- concurrency only, due now and awaiting no event, whose key is full and
-- has executions waiting already, waits behind them at once, without a job
-- (geneva._limit_wait_behind).
--
-- Plans: every statement is held to index lookups, planned once per session
-- (the settings below), as the claim's and the end's are: a list's length
-- is not known when the plan is made.
-- (the signatures before p_parent_id and p_skip_ongoing, and before
-- p_child_keys: dropped, so that an installed database is upgraded in place)
drop function if exists geneva.create_workflows(text, text, text[], boolean, text, text[], text[]);
drop function if exists geneva.create_workflows(text, text, text[], boolean, text, text[], text[], bigint, boolean);

create or replace function geneva.create_workflows(
  p_workflow_type text,
  p_hero_type text,
  p_hero_ids text[],
  p_allow_multiple boolean default false,
  p_trace_context text default null,
  p_groups text[] default null,
  p_idempotency_keys text[] default null,
  p_parent_id bigint default null,
  p_skip_ongoing boolean default false,
  p_child_keys text[] default null
)
returns bigint[]
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
as $$
declare
  v_now timestamptz := geneva.now();
  v_count integer := cardinality(p_hero_ids);
  v_definition geneva.workflow_definitions;
  v_first_step text;
  v_trace_context text := nullif(p_trace_context, '');
  v_ids bigint[];
  v_result bigint[];
  v_create boolean[];
  v_created bigint[];
  v_inserted integer;
  v_wait_keys text[];
  v_existing geneva.workflows;
  v_workflow geneva.workflows;
  v_detail text;
  v_parent geneva.workflows;
  v_from integer;
  v_heroes text[];
  v_wait interval;
  v_queue text;
  v_jobs regclass;
  v_skips boolean;
begin
  if p_workflow_type is null or p_hero_type is null or p_hero_ids is null or p_allow_multiple is null
    or p_skip_ongoing is null then
    raise exception 'workflow type, hero type, hero ids, allow_multiple and skip_ongoing must not be null'
      using errcode = '22004';
  end if;
  if p_skip_ongoing and (p_allow_multiple or p_idempotency_keys is not null) then
    raise exception 'skip_ongoing does not go with allow_multiple or idempotency keys'
      using errcode = '22023',
            hint = 'With allow_multiple no hero is skipped; a skipped hero''s key would name no workflow.';
  end if;
  if p_child_keys is not null and (p_parent_id is null or p_idempotency_keys is not null) then
    raise exception 'child keys name the children of a parent, without idempotency keys'
      using errcode = '22023',
            hint = 'Pass p_parent_id with p_child_keys; a child''s key is its idempotency key among its parent''s children.';
  end if;
  if array_ndims(p_hero_ids) > 1 or array_ndims(p_groups) > 1 or array_ndims(p_idempotency_keys) > 1
    or array_ndims(p_child_keys) > 1
    or array_lower(p_hero_ids, 1) <> 1 or array_lower(p_groups, 1) <> 1 or array_lower(p_idempotency_keys, 1) <> 1
    or array_lower(p_child_keys, 1) <> 1 then
    raise exception 'hero ids, groups, idempotency keys and child keys must be lists: one dimension, from 1'
      using errcode = '22023';
  end if;
  if array_position(p_hero_ids, null) is not null then
    raise exception 'hero id % of % is null', array_position(p_hero_ids, null), v_count
      using errcode = '22004';
  end if;
  if cardinality(p_groups) <> v_count or cardinality(p_idempotency_keys) <> v_count
    or cardinality(p_child_keys) <> v_count then
    raise exception '% hero ids, % groups, % idempotency keys and % child keys: each list names one per hero',
      v_count, cardinality(p_groups), cardinality(p_idempotency_keys), cardinality(p_child_keys)
      using errcode = '22023', hint = 'Pass NULL for a list that names none.';
  end if;
  perform geneva._check_length(p_workflow_type, 255, 'workflow type');
  perform geneva._check_length(p_hero_type, 255, 'hero type');
  perform geneva._check_lengths(p_hero_ids, 1024, 'hero id');
  if p_hero_type = '' or '' = any (p_hero_ids) then
    raise exception 'hero type and hero id must not be empty' using errcode = '22023';
  end if;

  perform geneva._check_lengths(p_groups, 255, 'group');
  if '' = any (p_groups) then
    raise exception 'group must not be empty' using errcode = '22023',
      hint = 'Pass NULL for a workflow without a group.';
  end if;

  if v_trace_context !~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' then
    raise exception 'trace context % is not a W3C traceparent', p_trace_context
      using errcode = '22023',
            hint = 'Pass the traceparent header''s value, e.g. 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01, or NULL.';
  end if;

  v_definition := geneva._definition(p_workflow_type);
  if v_definition.workflow_type is null then
    raise exception 'unknown workflow type %', p_workflow_type
      using errcode = 'WF001',
            hint = 'Register the type with geneva.define_workflow (the Go worker does it at start-up).',
            table = 'workflow_definitions';
  end if;

  perform geneva._check_lengths(p_idempotency_keys, 255, 'idempotency key');
  if '' = any (p_idempotency_keys) then
    raise exception 'idempotency key must not be empty' using errcode = '22023',
      hint = 'Pass NULL to create without a key.';
  end if;
  perform geneva._check_lengths(p_child_keys, 255, 'child key');
  if '' = any (p_child_keys) then
    raise exception 'child key must not be empty' using errcode = '22023',
      hint = 'Pass NULL to create a child without a key.';
  end if;

  -- the parent: locked, so that its children are counted one creation
  -- after another (geneva._children_count), ordered against its join's
  -- decision and its cancel's cascade (not against its children's ends,
  -- which count on their stripes), and ongoing
  if p_parent_id is not null then
    select w.* into v_parent
    from geneva.workflows w
    where w.id = p_parent_id
    for no key update;
    if not found then
      -- moved into history (docs/history.md): it has ended
      select h.* into v_parent from geneva.workflows_history h where h.id = p_parent_id;
    end if;
    if not found then
      raise exception 'parent workflow % not found', p_parent_id
        using errcode = 'P0002',
              table = 'workflows';
    end if;
    if v_parent.finished_at is not null or v_parent.canceled_at is not null then
      raise exception 'parent workflow % has ended', p_parent_id
        using errcode = '55000',
              detail = format('Workflow is %s.', v_parent.state),
              hint = 'Children are started by an ongoing workflow.',
              table = 'workflows';
    end if;
  end if;

  if v_count = 0 then
    return '{}';
  end if;

  -- an id for each hero, drawn in the list's order
  if v_count = 1 then
    v_ids := array[geneva._workflow_id(p_hero_type, p_hero_ids[1], p_parent_id)];
  else
    select array_agg(geneva._workflow_id(p_hero_type, p_hero_ids[o], p_parent_id) order by o) into v_ids
    from generate_series(1, v_count) o;
  end if;
  v_result := v_ids;
  v_created := v_ids;

  -- the child keys the parent's children have already, or that appear
  -- earlier in the list: not created (under the parent's row lock, taken
  -- above, so that a rival naming the same parent has committed or waits)
  if p_child_keys is not null and array_to_string(p_child_keys, '') <> '' then
    select array_agg(k.fresh order by k.ord),
      array_agg(case when k.fresh then v_ids[k.ord] end order by k.ord),
      array_agg(v_ids[k.ord] order by k.ord) filter (where k.fresh)
    into v_create, v_result, v_created
    from (
      select u.ord,
        u.child_key is null or (
          u.ord = min(u.ord) over (partition by u.child_key)
          and not exists (
            select from geneva.workflows w
            where w.parent_id = p_parent_id and w.child_key = u.child_key
          )
        ) as fresh
      from unnest(p_child_keys) with ordinality as u (child_key, ord)
    ) k;
    if v_created is null then
      return v_result;
    end if;
  end if;

  -- guard: a key given within its TTL returns the first workflow. The keys'
  -- rows are written first: a rival with one of the keys waits here for this
  -- transaction, then finds the key taken (a key past its time is taken
  -- over, in place). A key given twice in the list is written for its first
  -- hero; the others return that hero's workflow.
  if array_to_string(p_idempotency_keys, '') <> '' then
    -- the only writer of keys (sql/guards/idempotency_keys_guard.sql)
    perform pg_catalog.set_config('geneva.inserting', 'on', true);
    insert into geneva.idempotency_keys as k (workflow_type, idempotency_key, workflow_id, created_at, expires_at)
    select distinct on (u.idempotency_key) p_workflow_type, u.idempotency_key, v_ids[u.ord], v_now,
      v_now + v_definition.idempotency_ttl
    from unnest(p_idempotency_keys) with ordinality as u (idempotency_key, ord)
    where u.idempotency_key is not null
    order by u.idempotency_key, u.ord
    on conflict (workflow_type, idempotency_key) do update
    set workflow_id = excluded.workflow_id,
      created_at = excluded.created_at,
      expires_at = excluded.expires_at
    where k.expires_at <= v_now;
    perform pg_catalog.set_config('geneva.inserting', '', true);

    -- each key's workflow, this call's or the first call's
    select array_agg(coalesce(k.workflow_id, v_ids[u.ord]) order by u.ord) into v_result
    from unnest(p_idempotency_keys) with ordinality as u (idempotency_key, ord)
    left join geneva.idempotency_keys k
      on k.workflow_type = p_workflow_type and k.idempotency_key = u.idempotency_key;
    -- (a hero is created when its id is its own)
    select array_agg(v_result[o] = v_ids[o] order by o), array_agg(v_ids[o] order by o) filter (where v_result[o] = v_ids[o])
    into v_create, v_created
    from generate_series(1, v_count) o;
    if v_created is null then
      return v_result;
    end if;
  end if;

  v_first_step := v_definition.step_names[1];

  -- the only inserter of workflows (sql/guards/workflows_guard_columns.sql)
  perform pg_catalog.set_config('geneva.inserting', 'on', true);
  v_skips := p_skip_ongoing or pg_catalog.current_setting('transaction_isolation') = 'read committed';
  if not v_skips or cardinality(v_created) > 100 then
    -- a plain insert: under repeatable read and serializable, ON CONFLICT
    -- meets a rival committed after the snapshot with a serialization
    -- failure, where a plain insert reports the duplicate as one; and a
    -- list of more than a hundred tries it first, as ON CONFLICT's
    -- speculative insertion costs a fifth more a row (bench/NOTES.md: a
    -- fan-out's 10,000 children), and goes on below when it meets a
    -- duplicate (a shorter list does not: each such try is a
    -- subtransaction, and a transaction of many would overflow their cache)
    begin
      insert into geneva.workflows (
        id, workflow_type, hero_type, hero_id, state, next_step_name, allow_multiple, created_at, updated_at,
        transitioned_at, finished_at, trace_context, group_name, definition_version, started_version,
        parent_id, root_id, child_key
      )
      select v_ids[u.ord], p_workflow_type, p_hero_type, u.hero_id,
        case when v_first_step is null then 'finished' else 'ready' end, v_first_step, p_allow_multiple, v_now, v_now,
        case when v_first_step is null then v_now end, case when v_first_step is null then v_now end,
        v_trace_context, p_groups[u.ord], v_definition.version, v_definition.version,
        p_parent_id, coalesce(v_parent.root_id, v_parent.id), p_child_keys[u.ord]
      from unnest(p_hero_ids) with ordinality as u (hero_id, ord)
      where v_create is null or v_create[u.ord]
      order by u.ord;
      get diagnostics v_inserted = row_count;
    exception when unique_violation then
      get stacked diagnostics v_detail = pg_exception_detail;
      v_inserted := -1;
    end;
  end if;
  if v_skips and (v_inserted is null or v_inserted = -1) then
    -- a rival creating the same hero's workflow is waited for, then seen; a
    -- hero twice in the list is inserted once
    v_detail := null;
    insert into geneva.workflows (
      id, workflow_type, hero_type, hero_id, state, next_step_name, allow_multiple, created_at, updated_at,
      transitioned_at, finished_at, trace_context, group_name, definition_version, started_version,
      parent_id, root_id, child_key
    )
    select v_ids[u.ord], p_workflow_type, p_hero_type, u.hero_id,
      case when v_first_step is null then 'finished' else 'ready' end, v_first_step, p_allow_multiple, v_now, v_now,
      case when v_first_step is null then v_now end, case when v_first_step is null then v_now end,
      v_trace_context, p_groups[u.ord], v_definition.version, v_definition.version,
      p_parent_id, coalesce(v_parent.root_id, v_parent.id), p_child_keys[u.ord]
    from unnest(p_hero_ids) with ordinality as u (hero_id, ord)
    where v_create is null or v_create[u.ord]
    order by u.ord
    on conflict (workflow_type, hero_type, hero_id)
      where finished_at is null and canceled_at is null and not allow_multiple
      do nothing;
    get diagnostics v_inserted = row_count;
  end if;
  perform pg_catalog.set_config('geneva.inserting', '', true);

  -- the heroes skipped (p_skip_ongoing): NULL in the result
  -- (an id drawn above names a row only when this call inserted it; v_create
  -- says so after, for the statements below, which read the created by it)
  if p_skip_ongoing and v_inserted <> cardinality(v_created) then
    select array_agg(w.id is not null order by u.ord),
      array_agg(w.id order by u.ord),
      array_agg(w.id order by u.ord) filter (where w.id is not null)
    into v_create, v_result, v_created
    from unnest(v_ids) with ordinality as u (id, ord)
    left join geneva.workflows w on w.id = u.id and (v_create is null or v_create[u.ord]);
    if v_created is null then
      return v_result;
    end if;
  end if;

  -- guard: one ongoing workflow per type and hero (the first hero refused)
  if v_inserted <> cardinality(v_created) then
    select w.* into v_existing
    from unnest(p_hero_ids) with ordinality as u (hero_id, ord)
    join geneva.workflows w
      on w.workflow_type = p_workflow_type and w.hero_type = p_hero_type and w.hero_id = u.hero_id
      and w.finished_at is null and w.canceled_at is null and not w.allow_multiple
    where (v_create is null or v_create[u.ord]) and w.id <> v_ids[u.ord]
    order by u.ord
    limit 1;
    raise exception 'hero % % already has an ongoing % workflow', p_hero_type,
        coalesce(v_existing.hero_id, case when v_count = 1 then p_hero_ids[1] end, '(one of the list)'), p_workflow_type
      using errcode = '23505',
            detail = case
              when v_existing.id = any (v_created) then 'The hero appears more than once in the list.'
              when v_existing.id is not null then format('Workflow %s is %s.', v_existing.id, v_existing.state)
              else 'The other workflow was created after this transaction''s snapshot.'
                || coalesce(' ' || v_detail, '')
            end,
            hint = 'Finish or cancel it first, or create the new one with allow_multiple.',
            table = 'workflows',
            constraint = 'workflows_one_ongoing_per_hero';
  end if;

  if p_parent_id is not null then
    perform geneva._children_count(p_parent_id, v_created, v_first_step is null);
  end if;

  if v_first_step is null then
    return v_result;
  end if;

  if cardinality(v_created) = 1 then
    -- one workflow: its first step is scheduled row-wise, which costs less
    -- than the set-wise statement's fixed share (bench/NOTES.md); the row
    -- holds what _insert_execution reads of it (its id, type, hero and group),
    -- as inserted above, without reading it back
    v_workflow.id := v_created[1];
    v_workflow.workflow_type := p_workflow_type;
    v_workflow.hero_type := p_hero_type;
    v_workflow.hero_id := p_hero_ids[array_position(v_result, v_created[1])];
    v_workflow.group_name := p_groups[array_position(v_result, v_created[1])];
    perform geneva._insert_execution(
      v_workflow, v_definition, v_first_step,
      v_now + geneva._step_wait(v_definition.step_waits[1], v_definition.step_afters[1], v_now, v_now), true, p_await => true
    );
    return v_result;
  end if;

  -- behind the key's waiters, when it has some (see above): a step due now
  -- that awaits no event
  if geneva._step_wait(v_definition.step_waits[1], v_definition.step_afters[1], v_now, v_now) <= interval '0'
    and v_definition.step_await_timeouts[1] is null
    and geneva._limit_carries(v_definition.definition, v_definition.step_names, v_first_step) then
    with k as materialized (
      select u.ord,
        geneva._concurrency_key(v_definition.definition, p_workflow_type, p_groups[u.ord], p_hero_type, u.hero_id, p_parent_id)
          as key
      from unnest(p_hero_ids) with ordinality as u (hero_id, ord)
      where v_create is null or v_create[u.ord]
    ),
    waits as (select geneva._limit_wait_behind(array_agg(k.key)) as keys from k)
    select array_agg(case when k.key = any (w.keys) then k.key end order by k.ord) into v_wait_keys
    from k, waits w;
  end if;

  if v_definition.step_await_timeouts[1] is not null then
    -- a first step that awaits an event: _advance_many's move "first", a
    -- hundred a call (it reads back the River jobs it inserts by a loop
    -- over them for each execution, which over 10,000 at once cost 10 s;
    -- bench/NOTES.md)
    for v_from in 1 .. cardinality(v_created) by 100 loop
      perform geneva._advance_many(
        v_created[v_from : v_from + 99], array_fill('first'::text, array[least(100, cardinality(v_created) - v_from + 1)]),
        null, null, null, null, null, v_wait_keys[v_from : v_from + 99]
      );
    end loop;
    return v_result;
  end if;

  -- the first steps, set-wise (see above): what _advance_many's move
  -- "first" writes for a step that awaits nothing, of a workflow just
  -- inserted (no operator's request, not started inline, no slot carried):
  -- an execution scheduled after the step's wait, with a River job due
  -- then, or, with a wait key, waiting for it without a job
  select array_agg(p_hero_ids[u.ord] order by u.ord) into v_heroes
  from generate_series(1, v_count) as u (ord)
  where v_create is null or v_create[u.ord];
  v_wait := geneva._step_wait(v_definition.step_waits[1], v_definition.step_afters[1], v_now, v_now);
  v_queue := geneva._step_queue(v_definition.step_names, v_definition.step_queues, v_definition.queue, v_first_step);
  v_jobs := pg_catalog.pg_get_serial_sequence('public.river_job', 'id');
  perform pg_catalog.set_config('geneva.inserting', 'on', true);
  with planned as materialized (
    select c.workflow_id, c.hero_id, c.wait_key, geneva._execution_id(c.workflow_id) as execution_id,
      case when c.wait_key is null then pg_catalog.nextval(v_jobs) end as job_id
    from unnest(v_created, v_heroes, v_wait_keys) with ordinality as c (workflow_id, hero_id, wait_key, ord)
    order by c.ord
  ),
  jobs as (
    insert into public.river_job (
      id, args, kind, max_attempts, priority, queue, scheduled_at, state, metadata, tags
    )
    select p.job_id,
      geneva._step_job_args(p.execution_id, p.workflow_id, p_workflow_type, p_hero_type, p.hero_id, v_first_step),
      'geneva_step',
      25,
      v_definition.priority,
      v_queue,
      now() + greatest(v_wait, interval '0'),
      case when geneva._step_job_available(v_wait) then 'available' else 'scheduled' end::public.river_job_state,
      '{}',
      '{}'
    from planned p
    where p.job_id is not null
    order by p.execution_id
  )
  insert into geneva.step_executions (
    id, workflow_id, step_name, attempt, state, scheduled_for, job_id, limit_wait_key, created_at, updated_at
  )
  select p.execution_id, p.workflow_id, v_first_step, 1, 'scheduled', v_now + v_wait, p.job_id, p.wait_key, v_now, v_now
  from planned p
  order by p.execution_id;
  perform pg_catalog.set_config('geneva.inserting', '', true);

  -- River hears of the jobs due now (geneva._notify_insert)
  if v_wait <= interval '0' and (v_wait_keys is null or array_position(v_wait_keys, null) is not null) then
    perform geneva._notify_insert(v_queue);
  end if;

  return v_result;
end;
$$;

comment on function geneva.create_workflows(text, text, text[], boolean, text, text[], text[], bigint, boolean, text[]) is
'Creates a workflow of one type for each hero of a list and schedules each one''s first step, in the caller''s transaction, all or none (or skipping heroes with an ongoing one); a repeated idempotency key returns the first workflow; p_parent_id makes them its children, p_child_keys creates each key once among them.';
