-- geneva.retry_workflow: an operator reruns a workflow from a step, as a new
-- workflow: same type, hero, group, allow_multiple and trace context, with
-- retried_from naming the original, whose history stays as it is.
--
-- Called by: operators (any SQL client, goclient.RetryWorkflow, `geneva
-- retry`, the dashboard's "Retry from step…"), and geneva.bulk_workflows.
-- The original must be paused, finished or canceled. A paused one is
-- canceled first (its kept execution, if any, ends canceled/
-- canceled_externally), as geneva.cancel_workflow would, freeing its hero's
-- slot for the new run. The new workflow starts at p_from_step, scheduled
-- now (the step's own wait is not waited again; a step that awaits an event
-- waits for a new one: events stay with the workflow they were sent to),
-- with attempt 1 and no cursor. By default the step is the one that would
-- run next: for a workflow paused or canceled, its next_step_name (the step
-- that failed, for one paused or canceled by an error); for a finished one,
-- the first step.
--
-- Locks: the original's workflow row, then its active execution. Records the
-- action (geneva._log_action) on the original.
-- Returns the new workflow's id.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- ready or performing workflow; WF001 when its type is no longer defined;
-- 22023 for a step the type's definition does not have (or a type without
-- steps); 23505 (constraint workflows_one_ongoing_per_hero) when the hero has
-- another ongoing workflow of the type (the original ended, and another was
-- created since). Nothing is written on any error.
create or replace function geneva.retry_workflow(p_workflow_id bigint, p_from_step text default null)
returns bigint
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_workflow geneva.workflows := geneva._lock_workflow(p_workflow_id);
  v_definition geneva.workflow_definitions;
  v_execution geneva.step_executions;
  v_effect record;
  v_step text;
  v_new geneva.workflows;
  v_was text := v_workflow.state;
begin
  if v_workflow.state not in ('paused', 'finished', 'canceled') then
    raise exception 'workflow % cannot be retried', p_workflow_id
      using errcode = '55000',
            detail = format('Workflow is %s.', v_workflow.state),
            hint = 'Pause or cancel it first: only paused, finished and canceled workflows can be retried.',
            table = 'workflows';
  end if;

  v_definition := geneva._definition(v_workflow.workflow_type);
  if v_definition.workflow_type is null then
    raise exception 'unknown workflow type %', v_workflow.workflow_type
      using errcode = 'WF001',
            hint = 'Register the type with geneva.define_workflow (the Go worker does it at start-up).',
            table = 'workflow_definitions';
  end if;

  v_step := coalesce(
    p_from_step,
    case when v_workflow.state <> 'finished' then v_workflow.next_step_name end,
    v_definition.step_names[1]
  );
  if v_step is null or not v_step = any(v_definition.step_names) then
    raise exception 'workflow type % has no step %', v_workflow.workflow_type, coalesce(v_step, 'to retry from')
      using errcode = '22023',
            detail = format('Its steps are %s.', coalesce(nullif(array_to_string(v_definition.step_names, ', '), ''), 'none')),
            hint = 'Name one of its steps.';
  end if;

  -- guard: a paused original is canceled, as cancel_workflow does
  if v_workflow.state = 'paused' then
    v_execution := geneva._lock_active_execution(p_workflow_id);
    select e.* into strict v_effect
    from geneva._signal_effects() e
    where e.cause = 'operator' and e.signal = 'cancel';
    if v_execution.id is not null then
      perform geneva._end_execution(v_execution, v_effect.execution_state, v_effect.outcome);
    end if;
    v_workflow := geneva._advance(v_workflow, null, v_effect.workflow_move, null);
  end if;

  v_new := v_workflow;
  v_new.id := nextval('geneva.workflows_id_seq');
  v_new.state := 'ready';
  v_new.current_step_name := null;
  v_new.next_step_name := v_step;
  v_new.requested_action := null;
  v_new.created_at := v_now;
  v_new.updated_at := v_now;
  v_new.started_at := null;
  v_new.transitioned_at := null;
  v_new.paused_at := null;
  v_new.finished_at := null;
  v_new.canceled_at := null;
  v_new.hero_missing_at := null;
  v_new.retried_from := p_workflow_id;

  -- the only inserters of workflows (sql/triggers/workflows_guard_insert.sql)
  perform pg_catalog.set_config('geneva.inserting', 'on', true);
  begin
    insert into geneva.workflows select v_new.*;
  exception when unique_violation then
    raise exception 'hero % % already has an ongoing % workflow', v_new.hero_type, v_new.hero_id, v_new.workflow_type
      using errcode = '23505',
            detail = format('Workflow %s was %s.', p_workflow_id, v_was),
            hint = 'Finish or cancel the other one first.',
            table = 'workflows',
            constraint = 'workflows_one_ongoing_per_hero';
  end;
  perform pg_catalog.set_config('geneva.inserting', '', true);

  perform geneva._schedule_step(v_new, v_definition, v_step, v_now, true, p_await => true);

  perform geneva._log_action(
    'retry_workflow', p_workflow_id, jsonb_build_object('from_step', p_from_step),
    jsonb_build_object('workflow_id', v_new.id, 'from_step', v_step, 'original_state', v_was)
  );
  return v_new.id;
end;
$$;

comment on function geneva.retry_workflow(bigint, text) is
'Reruns a paused or ended workflow from a step (by default the one that would run next) as a new workflow with retried_from; a paused original is canceled.';
