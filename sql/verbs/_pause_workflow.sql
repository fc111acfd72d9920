-- geneva._pause_workflow: the one implementation of geneva.pause_workflow (see there: what
-- it does, what it locks and raises), which records its action
-- (geneva._log_action) with p_bulk_action_id: the id of the
-- geneva.bulk_workflows call it is part of, or NULL. A parameter, not a
-- setting: a caller cannot name a bulk call it did not make.
--
-- Called by: geneva.pause_workflow (NULL), geneva.bulk_workflows (its own row's id).
-- Raises: as geneva.pause_workflow.
create or replace function geneva._pause_workflow(p_workflow_id bigint, p_bulk_action_id bigint)
returns geneva.workflows
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_workflow geneva.workflows := geneva._lock_workflow(p_workflow_id);
  v_execution geneva.step_executions;
begin
  if v_workflow.state = 'ready' then
    -- a slot of a limit passed to its kept execution goes to the next waiter
    v_execution := geneva._lock_active_execution(p_workflow_id);
    if v_execution.limit_keys is not null then
      update geneva.step_executions e
      set limit_keys = null,
        updated_at = v_now
      where e.id = v_execution.id;
      perform geneva._limit_release(
        v_execution.limit_keys, array_fill(p_workflow_id, array[cardinality(v_execution.limit_keys)])
      );
    end if;
    update geneva.workflows w
    set state = 'paused',
      paused_at = v_now,
      transitioned_at = v_now,
      updated_at = v_now
    where w.id = p_workflow_id
    returning w.* into v_workflow;
  elsif v_workflow.state = 'performing' and v_workflow.requested_action is distinct from 'cancel'
    and v_workflow.requested_action is distinct from 'cancel_by_event' then
    update geneva.workflows w
    set requested_action = 'pause',
      updated_at = v_now
    where w.id = p_workflow_id
    returning w.* into v_workflow;
  else
    raise exception 'workflow % cannot be paused', p_workflow_id
      using errcode = '55000',
            detail = case
              when v_workflow.state = 'performing' then 'A cancel of the workflow is already requested.'
              else format('Workflow is %s.', v_workflow.state)
            end,
            hint = 'Only ready and performing workflows can be paused.',
            table = 'workflows';
  end if;

  perform geneva._log_action(
    'pause_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow),
    p_bulk_action_id => p_bulk_action_id
  );
  return v_workflow;
end;
$$;
