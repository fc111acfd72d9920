-- geneva.schedule_step: runs a step of a ready or paused workflow now: the
-- named step, or by default the one that would run next.
--
-- Called by: operators ("run it now instead of waiting"), and the test
-- helpers that run one step inline.
-- The workflow's scheduled execution, if any, is replaced (it ends
-- canceled/canceled_externally), a new execution of the step is scheduled now
-- with its River job (as one more attempt of the step), and the workflow is
-- ready. A step that awaits an event runs now without it (Step.Event() is
-- nil, as on a timeout with on_timeout run); an event sent for it stays for
-- a later step that awaits its name.
--
-- Locks: the workflow row, then its active execution. Records the action
-- (geneva._log_action).
-- Returns the workflow row after the call.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 22023 for a step
-- the workflow's definition does not have; 55000 for a performing, finished
-- or canceled workflow.
create or replace function geneva.schedule_step(p_workflow_id bigint, p_step_name text default null)
returns geneva.workflows
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_workflow geneva.workflows := geneva._lock_workflow(p_workflow_id);
  v_execution geneva.step_executions;
  v_definition geneva.workflow_definitions;
  v_step_name text;
begin
  if v_workflow.state not in ('ready', 'paused') then
    raise exception 'workflow % cannot schedule a step', p_workflow_id
      using errcode = '55000',
            detail = format('Workflow is %s.', v_workflow.state),
            hint = 'Only ready and paused workflows can schedule a step.',
            table = 'workflows';
  end if;

  v_definition := geneva._definition(v_workflow.workflow_type);

  v_step_name := coalesce(p_step_name, v_workflow.next_step_name);
  if v_step_name is null or not v_step_name = any(v_definition.step_names) then
    raise exception 'workflow type % has no step %', v_workflow.workflow_type, coalesce(v_step_name, 'to run next')
      using errcode = '22023',
            detail = format('Its steps are %s.', array_to_string(v_definition.step_names, ', '));
  end if;

  v_execution := geneva._lock_active_execution(p_workflow_id);

  if v_execution.id is not null then
    perform geneva._end_as(v_execution, 'operator', 'cancel');
  end if;
  perform geneva._insert_execution(
    v_workflow, v_definition, v_step_name, v_now, true, geneva._next_attempt(p_workflow_id, v_step_name)
  );

  update geneva.workflows w
  set state = 'ready',
    next_step_name = v_step_name,
    paused_at = null,
    transitioned_at = null,
    updated_at = v_now
  where w.id = p_workflow_id
  returning w.* into v_workflow;

  perform geneva._log_action(
    'schedule_step', p_workflow_id, jsonb_build_object('step_name', p_step_name), geneva._action_result(v_workflow)
  );
  -- (its children's ends as they are now)
  return geneva._workflow_now(v_workflow);
end;
$$;

comment on function geneva.schedule_step(bigint, text) is
'Runs a step of a ready or paused workflow now (by default the next one), replacing its scheduled execution.';
