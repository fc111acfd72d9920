-- geneva.cancel_workflow: an operator cancels a workflow, freeing its hero's
-- slot.
--
-- Called by: operators and applications (any SQL client, goclient, the CLI).
-- A ready or paused workflow is canceled now, with its active execution
-- (canceled/canceled_externally). A performing workflow is canceled at the
-- step boundary: the request is recorded (replacing a requested pause), the
-- running step's own result is recorded when it ends, and then the workflow
-- is canceled, even when that step was its last, and the execution that
-- would have come next is created canceled (canceled_externally). Requesting
-- it again is harmless.
--
-- Locks: the workflow row, then its active execution. Records the action
-- (geneva._log_action).
-- Returns the workflow row after the call.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- finished or canceled workflow.
create or replace function geneva.cancel_workflow(p_workflow_id bigint)
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
  v_effect record;
begin
  if v_workflow.state = 'performing' then
    update geneva.workflows w
    set requested_action = 'cancel',
      updated_at = v_now
    where w.id = p_workflow_id
    returning w.* into v_workflow;
    perform geneva._log_action('cancel_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow));
    return v_workflow;
  end if;

  if v_workflow.state not in ('ready', 'paused') then
    raise exception 'workflow % cannot be canceled', p_workflow_id
      using errcode = '55000',
            detail = format('Workflow is %s.', v_workflow.state),
            hint = 'Finished and canceled workflows cannot be canceled.',
            table = 'workflows';
  end if;

  v_execution := geneva._lock_active_execution(p_workflow_id);
  select e.* into strict v_effect
  from geneva._signal_effects() e
  where e.cause = 'operator' and e.signal = 'cancel';

  if v_execution.id is not null then
    perform geneva._end_execution(v_execution, v_effect.execution_state, v_effect.outcome);
  end if;

  v_workflow := geneva._advance(v_workflow, null, v_effect.workflow_move, null);
  perform geneva._log_action('cancel_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow));
  return v_workflow;
end;
$$;

comment on function geneva.cancel_workflow(bigint) is
'Cancels a workflow now (ready, paused) or at the end of its running step (performing); frees the hero''s slot.';
