-- geneva.start_step: claims a step execution for a worker, or records the
-- outcome of the worker's preconditions.
--
-- Called by: the worker when River delivers a step's job, after it has
-- evaluated the workflow's cancel_if and the step's skip_if (p_precondition
-- 'cancel' or 'skip'; 'hero_missing' when its hero loader found nothing; NULL
-- when the step should run). Calling it again, early, or for an execution that
-- has moved on is harmless.
--
-- Locks: the workflow row, then the execution row.
-- Returns one row when the worker should run the step now: the execution is
-- then in_progress and the workflow performing; with the workflow type's queue
-- and the trace context its creator stored (create_workflow's
-- p_trace_context), for the worker's instrumentation.
-- Returns no row, in order, when:
--   the execution is not scheduled (a duplicate or late job): nothing changes;
--   the workflow is finished or canceled: the execution is canceled
--     (canceled_externally);
--   the workflow is not ready (paused): the execution stays scheduled and
--     resume_workflow enqueues it again;
--   the execution is not due yet: it stays scheduled, and a job is enqueued for
--     its time unless one is still waiting in River;
--   the step is no longer defined (step_not_defined), the hero is missing
--     (the worker's hero loader found nothing, or the hero trigger of
--     geneva.track_hero stamped hero_missing_at while the workflow
--     performed) and the definition does not allow it (hero_missing), cancel_if held
--     (cancel), skip_if held (skip: from the worker, or `"skip_if": true` in
--     the definition): the execution ends and the workflow moves on as that
--     precondition's row in geneva._signal_effects says (a step no longer
--     defined pauses the workflow, the hero missing or cancel_if cancels it,
--     skip_if schedules the next step).
-- Raises: 22004 for a NULL id; 22023 for an unknown precondition; P0002 for an
-- unknown execution.
create or replace function geneva.start_step(
  p_execution_id bigint,
  p_precondition text default null
)
returns table (
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
  trace_context text
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := geneva.now();
  v_locked record;
  v_execution geneva.step_executions;
  v_workflow geneva.workflows;
  v_definition geneva.workflow_definitions;
  v_index integer;
  v_decided text;
  v_effect record;
begin
  if p_precondition is not null and p_precondition not in ('cancel', 'skip', 'hero_missing') then
    raise exception 'unknown precondition %', p_precondition
      using errcode = '22023',
            hint = 'Preconditions are cancel, skip and hero_missing (or NULL to run the step).';
  end if;

  v_locked := geneva._lock_execution(p_execution_id);
  v_workflow := v_locked.o_workflow;
  v_execution := v_locked.o_execution;

  -- guard: only a scheduled execution starts; anything else is a duplicate or late job
  if v_execution.state <> 'scheduled' then
    return;
  end if;

  -- guard: a finished or canceled workflow keeps no active execution
  if v_workflow.state in ('finished', 'canceled') then
    perform geneva._end_as(v_execution, 'stray', 'cancel');
    return;
  end if;

  -- guard: a paused workflow keeps its execution scheduled until resumed
  if v_workflow.state <> 'ready' then
    return;
  end if;

  -- guard: an early job leaves the execution for a job at its time
  if v_execution.scheduled_for > v_now then
    perform geneva._ensure_job(v_workflow, v_execution);
    return;
  end if;

  v_definition := geneva._definition(v_workflow.workflow_type);
  v_index := array_position(v_definition.step_names, v_execution.step_name);

  -- guard: what is decided instead of starting the step, in order: the step
  -- is no longer defined (a deploy may have removed it), the hero is gone,
  -- cancel_if held, skip_if held
  v_decided := case
    when v_index is null then 'step_not_defined'
    when (p_precondition = 'hero_missing' or v_workflow.hero_missing_at is not null)
      and not v_definition.may_proceed_without_hero then 'hero_missing'
    when p_precondition = 'cancel' then 'cancel'
    when p_precondition = 'skip'
      or v_definition.definition -> 'steps' -> (v_index - 1) -> 'skip_if' = 'true'::jsonb then 'skip'
  end;
  if v_decided is not null then
    select e.* into strict v_effect
    from geneva._signal_effects() e
    where e.cause = 'precondition' and e.signal = v_decided;
    perform geneva._end_execution(
      v_execution, v_effect.execution_state, v_effect.outcome,
      p_error_message => case when v_decided = 'step_not_defined' then format(
        'step %s is not defined in workflow type %s', v_execution.step_name, v_workflow.workflow_type
      ) end
    );
    perform geneva._advance(v_workflow, v_definition, v_effect.workflow_move, v_execution.step_name);
    return;
  end if;

  update geneva.step_executions e
  set state = 'in_progress',
    started_at = v_now,
    updated_at = v_now
  where e.id = v_execution.id;

  update geneva.workflows w
  set state = 'performing',
    current_step_name = v_execution.step_name,
    started_at = coalesce(w.started_at, v_now),
    updated_at = v_now
  where w.id = v_workflow.id;

  return query
  select
    v_execution.id,
    v_workflow.id,
    v_workflow.workflow_type,
    v_workflow.hero_type,
    v_workflow.hero_id,
    v_execution.step_name,
    v_execution.attempt,
    v_execution.scheduled_for,
    v_now,
    v_execution.cursor,
    v_execution.continues_from_id,
    v_definition.queue,
    v_workflow.trace_context;
end;
$$;

comment on function geneva.start_step(bigint, text) is
'Worker protocol: claims a due scheduled execution (one row back) or records its preconditions (no row).';
