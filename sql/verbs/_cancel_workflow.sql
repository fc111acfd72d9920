-- geneva._cancel_workflow: the one implementation of geneva.cancel_workflow (see there: what
-- it does, what it locks and raises), which records its action
-- (geneva._log_action) with p_bulk_action_id: the id of the
-- geneva.bulk_workflows call it is part of, or NULL. A parameter, not a
-- setting: a caller cannot name a bulk call it did not make.
--
-- Called by: geneva.cancel_workflow (NULL), geneva.bulk_workflows (its own row's id).
-- Raises: as geneva.cancel_workflow.
create or replace function geneva._cancel_workflow(p_workflow_id bigint, p_bulk_action_id bigint)
returns geneva.workflows
language plpgsql
volatile
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
    perform geneva._log_action(
      'cancel_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow),
      p_bulk_action_id => p_bulk_action_id
    );
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
  perform geneva._log_action(
    'cancel_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow),
    p_bulk_action_id => p_bulk_action_id
  );
  return v_workflow;
end;
$$;
