-- geneva.complete_steps: complete_step and complete_and_continue for many
-- executions at once, in one transaction.
--
-- Called by: the Go worker's completer, which gathers the normal ends of the
-- steps that finish close together and records them with one call and one
-- commit. Each element is what one complete_step (p_continue false) or
-- complete_and_continue (p_continue true) call would be, and is recorded
-- exactly as that call records it: the arrays are parallel, one element per
-- execution; p_waits and p_job_ids elements may be NULL.
--
-- Locks: every named execution's workflow row in id order, then every
-- execution row in id order, then records the executions in that order: the
-- order of every other function's locks (workflow, then execution), so that
-- concurrent batches, single calls and operators' calls cannot deadlock.
-- Returns one row per element, named by its position (ordinality, from 1;
-- the rows come in lock order): what complete_and_continue returns for it.
-- Plans: the settings below hold every statement here to index lookups by
-- id, planned once per session (a generic plan), whatever the tables' size
-- when it was planned: planned while the tables were nearly empty (a new
-- database, the first minutes of a run), a set-wise statement would
-- otherwise keep sequential scans and hash joins, at several times the cost.
-- Raises: 22004 for NULL arrays or a NULL execution id; 22023 for arrays of
-- different lengths, an execution named twice, or anything complete_step
-- raises for an element; P0002 for an unknown execution. One bad element
-- fails the whole call and nothing is recorded: the worker then records the
-- elements one by one.
create or replace function geneva.complete_steps(
  p_execution_ids bigint[],
  p_signals text[],
  p_waits interval[],
  p_job_ids bigint[],
  p_continue boolean[]
)
returns table (
  ordinality integer,
  outcome text,
  workflow_state text,
  next_execution_id bigint,
  next_step_name text,
  next_attempt integer,
  next_started_at timestamptz,
  next_cursor jsonb,
  next_continues_from_id bigint
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
  v_fast integer[];
  v_slow integer[];
  v_ord integer;
  v_queue text;
  v_queues text[];
begin
  if p_execution_ids is null or p_signals is null or p_waits is null or p_job_ids is null
    or p_continue is null then
    raise exception 'arrays must not be null' using errcode = '22004';
  end if;
  if cardinality(p_signals) <> v_n or cardinality(p_waits) <> v_n
    or cardinality(p_job_ids) <> v_n or cardinality(p_continue) <> v_n then
    raise exception 'arrays of different lengths'
      using errcode = '22023',
            hint = 'Pass one signal, wait, job id and continue flag per execution id.';
  end if;

  -- the locks, in the one order: workflows by id, then executions by id
  perform geneva._lock_executions(p_execution_ids);

  -- The common case, a step that succeeded while its workflow performs with
  -- no operator's request waiting and is still defined, is recorded for all
  -- such elements at once below: what geneva._complete_step and
  -- geneva._advance do for it (move "next"), as a few set-wise statements.
  -- Every other element (another signal, a late or duplicate report, a
  -- requested pause or cancel, a removed step, a hero deleted while the step
  -- ran) goes through
  -- geneva._complete_step alone, in lock order, afterwards.
  select
    coalesce(array_agg(i.ord order by i.workflow_id) filter (where i.fast), '{}'),
    coalesce(array_agg(i.ord order by i.workflow_id, i.execution_id) filter (where not i.fast), '{}')
  into v_fast, v_slow
  from (
    select i.ord::integer, i.execution_id, e.workflow_id,
      coalesce(
        p_signals[i.ord] = 'success' and p_waits[i.ord] is null
          and e.state = 'in_progress' and w.state = 'performing' and w.requested_action is null
          and w.hero_missing_at is null
          and d.step_names @> array[e.step_name],
        false
      ) as fast
    from unnest(p_execution_ids) with ordinality as i (execution_id, ord)
    left join geneva.step_executions e on e.id = i.execution_id
    left join geneva.workflows w on w.id = e.workflow_id
    left join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  ) i;

  if cardinality(v_fast) > 0 then
    -- each report names a job that ran its execution, or none
    perform geneva._check_job(e, p_job_ids[o.ord])
    from unnest(v_fast) as o (ord)
    join geneva.step_executions e on e.id = p_execution_ids[o.ord]
    where p_job_ids[o.ord] is distinct from e.job_id and p_job_ids[o.ord] is not null;

    -- the executions end completed/success (geneva._end_execution)
    perform pg_catalog.set_config('geneva.ending', 'on', true);
    update geneva.step_executions e
    set state = x.execution_state,
      outcome = x.outcome,
      completed_at = v_now,
      finished_at = v_now,
      updated_at = v_now
    from geneva._signal_effects() x
    where x.cause = 'step' and x.signal = 'success'
      and e.id = any (array(select p_execution_ids[o] from unnest(v_fast) o));
    perform pg_catalog.set_config('geneva.ending', '', true);

    -- the next steps are scheduled, with their River jobs, or started here
    -- for the worker (geneva._advance, geneva._schedule_step,
    -- geneva._enqueue_step), and the workflows move on
    perform pg_catalog.set_config('geneva.inserting', 'on', true);
    with item as (
      select o.ord, w.id as workflow_id, w.workflow_type, w.hero_type, w.hero_id,
        d.queue, d.priority,
        d.step_names[k.idx + 1] as next_step,
        coalesce(d.step_waits[k.idx + 1], interval '0') as next_wait,
        coalesce(
          p_continue[o.ord] and d.step_waits[k.idx + 1] <= interval '0'
            and coalesce(d.definition -> 'cancel_if', '[]') = '[]'
            and not (d.definition -> 'steps' -> k.idx ? 'skip_if'),
          false
        ) as start
      from unnest(v_fast) as o (ord)
      join geneva.step_executions e on e.id = p_execution_ids[o.ord]
      join geneva.workflows w on w.id = e.workflow_id
      join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
      cross join lateral (select array_position(d.step_names, e.step_name) as idx) k
    ),
    planned as materialized (
      select item.*,
        case when item.next_step is not null then nextval('geneva.step_executions_id_seq') end as next_id
      from item
    ),
    jobs as (
      insert into public.river_job (
        args, kind, max_attempts, priority, queue, scheduled_at, state, metadata, tags
      )
      select
        jsonb_build_object(
          'execution_id', p.next_id,
          'workflow_id', p.workflow_id,
          'workflow_type', p.workflow_type,
          'hero_type', p.hero_type,
          'hero_id', p.hero_id,
          'step_name', p.next_step
        ),
        'geneva_step',
        25,
        p.priority,
        p.queue,
        now() + greatest(p.next_wait, interval '0'),
        case when p.next_wait <= interval '5 seconds' then 'available' else 'scheduled' end::public.river_job_state,
        '{}',
        '{}'
      from planned p
      where p.next_id is not null and not p.start
      order by p.next_id
      returning river_job.id, (river_job.args ->> 'execution_id')::bigint as execution_id
    ),
    executions as (
      insert into geneva.step_executions (
        id, workflow_id, step_name, attempt, state, scheduled_for, started_at, job_id, cursor,
        continues_from_id, created_at, updated_at
      )
      select p.next_id, p.workflow_id, p.next_step, 1,
        case when p.start then 'in_progress' else 'scheduled' end, v_now + p.next_wait,
        case when p.start then v_now end, j.id, null, null, v_now, v_now
      from planned p
      left join jobs j on j.execution_id = p.next_id
      where p.next_id is not null
      order by p.next_id
    ),
    moved as (
      update geneva.workflows w
      set state = case when p.next_step is null then 'finished' when p.start then 'performing' else 'ready' end,
        current_step_name = case when p.start then p.next_step end,
        next_step_name = p.next_step,
        requested_action = null,
        transitioned_at = case when p.next_step is null then v_now end,
        paused_at = null,
        finished_at = case when p.next_step is null then v_now else w.finished_at end,
        updated_at = v_now
      from planned p
      where w.id = p.workflow_id
      returning p.queue, p.next_step is not null and not p.start and p.next_wait <= interval '0' as due_job
    )
    select coalesce(array_agg(distinct m.queue) filter (where m.due_job), '{}')
    into v_queues
    from moved m;
    perform pg_catalog.set_config('geneva.inserting', '', true);

    -- the River jobs that ran these steps are done (geneva._complete_job)
    update public.river_job j
    set state = 'completed',
      finalized_at = now()
    where j.id = any (array(select p_job_ids[o] from unnest(v_fast) o where p_job_ids[o] is not null))
      and j.state::text = 'running';

    -- River hears of the jobs due now, once per queue (geneva._notify_insert)
    foreach v_queue in array v_queues loop
      perform geneva._notify_insert(v_queue);
    end loop;

    return query
    select o.ord, e.outcome, w.state, n.id, n.step_name, n.attempt, n.started_at, n.cursor,
      n.continues_from_id
    from unnest(v_fast) as o (ord)
    join geneva.step_executions e on e.id = p_execution_ids[o.ord]
    join geneva.workflows w on w.id = e.workflow_id
    left join geneva.step_executions n
      on w.state = 'performing' and n.workflow_id = w.id and n.state = 'in_progress';
  end if;

  foreach v_ord in array v_slow loop
    return query
    select v_ord, c.*
    from geneva._complete_step(
      p_execution_ids[v_ord], p_signals[v_ord], p_waits[v_ord], p_job_ids[v_ord], p_continue[v_ord]
    ) c;
  end loop;
end;
$$;


comment on function geneva.complete_steps(bigint[], text[], interval[], bigint[], boolean[]) is
'Worker protocol: complete_step or complete_and_continue for many executions in one call, one result row per element.';
