-- geneva.start_steps: claims step executions for a worker, or records the
-- outcomes of the worker's preconditions, set-wise: the one implementation of
-- a claim, which geneva.start_step calls with one element.
--
-- Called by: the Go worker, which claims the executions of the River jobs it
-- was handed close together with one call and one commit, after evaluating
-- each workflow's cancel_if and step's skip_if (p_preconditions: 'cancel' or
-- 'skip'; 'hero_missing' when its hero loader found nothing; NULL when the
-- step should run). Calling it again, early, or for an execution that has
-- moved on is harmless.
--
-- Per element, in order:
--   the execution is not scheduled (a duplicate or late job): nothing
--     changes;
--   the workflow is finished or canceled: the execution ends as
--     geneva._signal_effects' (stray, cancel) row says;
--   the workflow is not ready (paused): the execution stays scheduled and
--     resume_workflow enqueues it again;
--   the execution is not due yet: it stays scheduled, and a job is enqueued
--     for its time unless one is still waiting in River (geneva._ensure_job);
--   the step is no longer defined (step_not_defined), the hero is missing
--     (the worker's hero loader found nothing, or the hero trigger of
--     geneva.track_hero stamped hero_missing_at while the workflow
--     performed) and the definition does not allow it (hero_missing),
--     cancel_if held (cancel), skip_if held (skip: from the worker, or
--     `"skip_if": true` in the definition): the execution ends and the
--     workflow moves on as that precondition's row in
--     geneva._signal_effects says (geneva._advance_many: a step no longer
--     defined pauses the workflow, the hero missing or cancel_if cancels it,
--     skip_if schedules the next step);
--   the step awaits an event (its definition's "await") and none has come
--     for the workflow: a join (an await of its children) whose condition
--     holds already (geneva._children_join sends its event now) starts with
--     it; otherwise its timeout has passed (it was due at its
--     await_until), and the await's on_timeout decides: run starts it without
--     an event; cancel, pause or skip end it and move the workflow as the
--     (timeout, …) rows of geneva._signal_effects say (canceled_by_timeout,
--     paused_by_timeout, skipped_by_timeout); an execution due before its
--     timeout without an event (a repeat of one whose event was taken, a
--     join whose condition does not hold yet) is due again at its timeout;
--   the step is held to limits (the type's concurrency or rate_limit, the
--     step's named limits) and one is full now: the execution stays
--     scheduled, not an attempt, waiting for a slot without a job or
--     rescheduled to a rate window with room (geneva._limit_admit);
--   otherwise the execution is in_progress and the workflow performing, and
--     a row is returned for the worker to run it.
--
-- Locks: every named execution's workflow row in id order, then every
-- execution row in id order (the order of every other function's locks).
-- Returns one row per element whose step the worker should run now, named by
-- its position (ordinality, from 1): the execution, its workflow, type,
-- hero, step name, attempt, times, cursor, the execution it continues, the
-- step's queue (geneva._step_queue), the trace context its creator stored
-- (create_workflow's p_trace_context) and the event it consumed (the oldest
-- of its awaited name not consumed yet, now marked consumed by it) or
-- carries from the execution it repeats (NULL when none; its sender,
-- event_sent_by, the session_user that sent it, last), and the
-- workflow's group (create_workflow's p_group), and the step's "http" in
-- the current definition (geneva._step_http: NULL for a step a Go worker
-- runs), and its idempotency key: the id of the first execution of an
-- unbroken run of recovered ones this execution repeats (a worker died, or
-- gave the step back, while it ran: the step may have done its work), else
-- its own id; no row for the others.
-- Plans: the settings below hold every statement here to index lookups by
-- id, planned once per session (a generic plan), whatever the tables' size
-- when it was planned: planned while the tables were nearly empty (a new
-- database, the first minutes of a run), a set-wise statement would
-- otherwise keep sequential scans and hash joins, at several times the cost.
-- Raises: 22004 for NULL arrays or a NULL execution id; 22023 for arrays of
-- different lengths, an execution named twice, or an unknown precondition;
-- P0002 for an unknown execution. One bad element fails the whole call and
-- nothing is recorded.
create or replace function geneva.start_steps(
  p_execution_ids bigint[],
  p_preconditions text[]
)
returns table (
  ordinality integer,
  execution_id bigint,
  workflow_id bigint,
  workflow_type text,
  hero_type text,
  hero_id text,
  step_name text,
  attempt integer,
  scheduled_for timestamptz,
  started_at timestamptz,
  cursor jsonb,
  continues_from_id bigint,
  queue text,
  trace_context text,
  event_id bigint,
  event_name text,
  event_payload jsonb,
  event_sent_at timestamptz,
  group_name text,
  http jsonb,
  idempotency_key bigint,
  event_sent_by text
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
as $$
#variable_conflict use_column
declare
  v_now timestamptz := geneva.now();
  v_n integer := coalesce(cardinality(p_execution_ids), 0);
  v_kinds text[];
  v_events bigint[];
  v_event bigint;
  v_limited boolean[];
  v_admitted bigint[];
  -- the executions held to limits that start (geneva._limit_admit): each
  -- one's id (as text) to the keys of the slots it holds
  v_slots jsonb;
  v_bad integer;
  v_item record;
  v_moves record;
  v_execution geneva.step_executions;
begin
  if p_execution_ids is null or p_preconditions is null then
    raise exception 'arrays must not be null' using errcode = '22004';
  end if;
  if cardinality(p_preconditions) <> v_n then
    raise exception 'arrays of different lengths'
      using errcode = '22023',
            hint = 'Pass one precondition (or NULL) per execution id.';
  end if;
  -- the locks, in the one order: workflows by id, then executions by id
  perform geneva._lock_executions(p_execution_ids);

  -- what each element is, in the order above: none, stray, early, a
  -- precondition's signal, or start (or bad: an unknown precondition, an
  -- unknown execution)
  select array_agg(
    case
      when p_preconditions[i.ord] not in ('cancel', 'skip', 'hero_missing') then 'bad_precondition'
      when e.id is null then 'not_found'
      when e.state <> 'scheduled' then 'none'
      when w.state in ('finished', 'canceled') then 'stray'
      when w.state <> 'ready' then 'none'
      when e.scheduled_for > v_now then 'early'
      when d.step_names is null or not d.step_names @> array[e.step_name] then 'step_not_defined'
      when (p_preconditions[i.ord] = 'hero_missing' or w.hero_missing_at is not null)
        and not d.may_proceed_without_hero then 'hero_missing'
      when p_preconditions[i.ord] = 'cancel' then 'cancel'
      when p_preconditions[i.ord] = 'skip'
        or d.definition -> 'steps' -> (array_position(d.step_names, e.step_name) - 1) -> 'skip_if' = 'true'::jsonb
        then 'skip'
      when e.await_event is null or e.event_id is not null or ev.id is not null then 'start'
      when e.await_until > v_now then 'rewait'
      else coalesce(
        'timeout_' || nullif(
          d.definition -> 'steps' -> (array_position(d.step_names, e.step_name) - 1) -> 'await' ->> 'on_timeout',
          'run'
        ),
        'start'
      )
    end
    order by i.ord
  ),
    array_agg(ev.id order by i.ord),
    array_agg(coalesce(geneva._limited(d.definition, d.step_names, e.step_name), false) order by i.ord)
  into v_kinds, v_events, v_limited
  from unnest(p_execution_ids) with ordinality as i (execution_id, ord)
  left join geneva.step_executions e on e.id = i.execution_id
  left join geneva.workflows w on w.id = e.workflow_id
  left join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  -- the event an awaiting execution takes: its names' oldest not consumed
  -- (with "since": "wait", of those sent after the step was reached)
  left join lateral (
    select x.id
    from geneva.events x
    where e.await_event is not null and e.event_id is null
      and x.workflow_id = e.workflow_id and x.name = any (coalesce(e.await_names, array[e.await_event]))
      and x.consumed_by is null and x.id > coalesce(e.await_after, 0)
    order by x.id
    limit 1
  ) ev on true;

  v_bad := coalesce(array_position(v_kinds, 'bad_precondition'), array_position(v_kinds, 'not_found'));
  if v_bad is not null and v_kinds[v_bad] = 'bad_precondition' then
    raise exception 'unknown precondition %', p_preconditions[v_bad]
      using errcode = '22023',
            hint = 'Preconditions are cancel, skip and hero_missing (or NULL to run the step).';
  elsif v_bad is not null then
    raise exception 'step execution % not found', p_execution_ids[v_bad]
      using errcode = 'P0002',
            table = 'step_executions';
  end if;

  -- a join whose condition holds at its claim (its children ended before it
  -- began, or it has none) starts now, with its event: geneva._children_join
  -- sends it under the parent's lock, taken above (exactly once)
  if 'rewait' = any (v_kinds) then
    for v_item in
      select t.ord, w
      from unnest(p_execution_ids, v_kinds) with ordinality as t (execution_id, kind, ord)
      join geneva.step_executions e on e.id = t.execution_id
      join geneva.workflows w on w.id = e.workflow_id
      where t.kind = 'rewait' and e.await_event = 'geneva:children'
      order by w.id, e.id
    loop
      perform geneva._children_join(v_item.w);
      select x.id into v_event
      from geneva.events x
      where x.workflow_id = (v_item.w).id and x.name = 'geneva:children' and x.consumed_by is null
      order by x.id
      limit 1;
      if v_event is not null then
        v_kinds[v_item.ord] := 'start';
        v_events[v_item.ord] := v_event;
      end if;
    end loop;
  end if;

  -- the steps held to limits start only if their limits allow (the rest
  -- wait, geneva._limit_admit; with the executions that end below, whose
  -- slots' and keys' locks it takes with its own)
  if true = any (v_limited) then
    select array_agg(t.execution_id order by t.execution_id) into v_admitted
    from unnest(p_execution_ids, v_kinds, v_limited) as t (execution_id, kind, limited)
    where t.kind = 'start' and t.limited;
    if v_admitted is not null then
      v_slots := geneva._limit_admit(v_admitted, array(
        select t.execution_id
        from unnest(p_execution_ids, v_kinds) as t (execution_id, kind)
        where t.kind not in ('none', 'start', 'early', 'rewait')
      ));
      select array_agg(
          case when t.kind = 'start' and t.limited and not v_slots ? t.execution_id::text then 'limited' else t.kind end
          order by t.ord
        )
      into v_kinds
      from unnest(p_execution_ids, v_kinds, v_limited) with ordinality as t (execution_id, kind, limited, ord);
    end if;
  end if;

  -- the rare kinds, one by one in lock order, through the one ender
  if v_kinds && array[
    'stray', 'early', 'rewait', 'step_not_defined', 'hero_missing', 'cancel', 'skip',
    'timeout_cancel', 'timeout_pause', 'timeout_skip'
  ] then
  for v_item in
    select e, w, t.kind
    from unnest(p_execution_ids, v_kinds) as t (execution_id, kind)
    join geneva.step_executions e on e.id = t.execution_id
    join geneva.workflows w on w.id = e.workflow_id
    where t.kind not in ('none', 'start')
    order by w.id, e.id
  loop
    if v_item.kind = 'stray' then
      perform geneva._end_as(v_item.e, 'stray', 'cancel');
    elsif v_item.kind = 'early' then
      perform geneva._ensure_job(v_item.w, v_item.e);
    elsif v_item.kind = 'rewait' then
      update geneva.step_executions e
      set scheduled_for = e.await_until,
        updated_at = v_now
      where e.id = (v_item.e).id
      returning e.* into v_execution;
      perform geneva._ensure_job(v_item.w, v_execution);
    elsif v_item.kind like 'timeout_%' then
      perform geneva._end_as(v_item.e, 'timeout', substr(v_item.kind, 9));
    elsif v_item.kind = 'step_not_defined' then
      perform geneva._end_as(v_item.e, 'precondition', 'step_not_defined', p_error_message => format(
        'step %s is not defined in workflow type %s', (v_item.e).step_name, (v_item.w).workflow_type
      ));
    else
      perform geneva._end_as(v_item.e, 'precondition', v_item.kind);
    end if;
  end loop;
  end if;

  -- the workflows whose precondition decided move on, in one batch
  if v_kinds && array[
    'step_not_defined', 'hero_missing', 'cancel', 'skip', 'timeout_cancel', 'timeout_pause', 'timeout_skip'
  ] then
  select array_agg(e.workflow_id order by e.workflow_id) as workflow_ids,
    array_agg(x.workflow_move order by e.workflow_id) as moves,
    array_agg(e.step_name order by e.workflow_id) as step_names
  into v_moves
  from unnest(p_execution_ids, v_kinds) as t (execution_id, kind)
  join geneva.step_executions e on e.id = t.execution_id
  join geneva._signal_effects() x
    on (x.cause, x.signal) = (
      case when t.kind like 'timeout_%' then 'timeout' else 'precondition' end,
      case when t.kind like 'timeout_%' then substr(t.kind, 9) else t.kind end
    );
  if v_moves.workflow_ids is not null then
    perform geneva._advance_many(
      v_moves.workflow_ids, v_moves.moves, v_moves.step_names,
      array_fill(null::interval, array[cardinality(v_moves.workflow_ids)]),
      array_fill(null::bigint, array[cardinality(v_moves.workflow_ids)]),
      array_fill(false, array[cardinality(v_moves.workflow_ids)])
    );
  end if;
  end if;

  -- the steps to run start, each awaiting one with its event, consumed
  if array_remove(v_events, null) <> '{}' then
    perform pg_catalog.set_config('geneva.consuming', 'on', true);
    update geneva.events ev
    set consumed_by = t.execution_id,
      consumed_at = v_now
    from unnest(p_execution_ids, v_kinds, v_events) as t (execution_id, kind, event_id)
    where ev.id = t.event_id and t.kind = 'start';
    perform pg_catalog.set_config('geneva.consuming', '', true);
  end if;

  -- (one statement: the executions start, their workflows perform, and
  -- the rows to run are returned; each statement's start-up is most of its
  -- cost here. geneva._end_running starts the waiters it hands to a
  -- worker with the same two writes, in its own statement: bench/NOTES.md)
  return query
  with started as (
    update geneva.step_executions e
    set state = 'in_progress',
      started_at = v_now,
      event_id = coalesce(t.event_id, e.event_id),
      limit_keys = case
        when v_slots ? e.id::text
          then (
            select array_agg(k.key order by k.ord)
            from jsonb_array_elements_text(nullif(v_slots -> e.id::text, 'null'::jsonb)) with ordinality as k (key, ord)
          )
        else e.limit_keys
      end,
      limit_wait_key = null,
      updated_at = v_now
    from unnest(p_execution_ids, v_kinds, v_events) with ordinality as t (execution_id, kind, event_id, ord)
    where e.id = t.execution_id and t.kind = 'start'
    returning t.ord, e.id, e.workflow_id, e.step_name, e.attempt, e.scheduled_for, e.cursor, e.continues_from_id,
      e.event_id
  ),
  moved as (
    update geneva.workflows w
    set state = 'performing',
      current_step_name = s.step_name,
      started_at = coalesce(w.started_at, v_now),
      updated_at = v_now
    from started s
    where w.id = s.workflow_id
    returning w.id, w.workflow_type, w.hero_type, w.hero_id, w.trace_context, w.group_name
  )
  select e.ord::integer, e.id, w.id, w.workflow_type, w.hero_type, w.hero_id, e.step_name, e.attempt,
    e.scheduled_for, v_now, e.cursor, e.continues_from_id,
    geneva._step_queue(d.step_names, d.step_queues, d.queue, e.step_name), w.trace_context,
    ev.id, ev.name, ev.payload, ev.sent_at, w.group_name,
    geneva._step_http(d.definition, d.step_names, e.step_name),
    -- (a first attempt is its own; a later one may repeat recovered ones)
    case when e.attempt = 1 then e.id else coalesce((
      select min(p.id)
      from geneva.step_executions p
      where p.workflow_id = e.workflow_id and p.step_name = e.step_name and p.id < e.id
        and p.outcome = 'recovered'
        and not exists (
          select from geneva.step_executions q
          where q.workflow_id = e.workflow_id and q.id > p.id and q.id < e.id
            and q.outcome is distinct from 'recovered'
        )
    ), e.id) end,
    ev.sent_by
  from started e
  join moved w on w.id = e.workflow_id
  join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  left join geneva.events ev on ev.id = e.event_id
  order by w.id;
end;
$$;

comment on function geneva.start_steps(bigint[], text[]) is
'Worker protocol: claims due scheduled executions (a row per element to run now) or records their preconditions.';
