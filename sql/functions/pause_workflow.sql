-- geneva.pause_workflow: an operator pauses a workflow.
--
-- Called by: operators and applications (any SQL client, goclient, the CLI).
-- A ready workflow pauses now and keeps its scheduled execution (it becomes
-- overdue while paused; resume enqueues it again). A performing workflow
-- pauses at the step boundary: the request is recorded, the running step's own
-- result is recorded when it ends, and then the workflow pauses with the next
-- execution kept scheduled (or finishes, when nothing is left to run).
-- Requesting it again is harmless.
--
-- A slot of a limit passed to a ready workflow's kept execution is given to
-- the next execution waiting for it.
--
-- Locks: the workflow row, then (ready) its active execution. Records the
-- action (geneva._log_action).
-- Returns the workflow row after the call.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- workflow that is paused, finished or canceled, or performing with a cancel
-- already requested.
create or replace function geneva.pause_workflow(p_workflow_id bigint)
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
  elsif v_workflow.state = 'performing' and v_workflow.requested_action is distinct from 'cancel' then
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

  perform geneva._log_action('pause_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow));
  return v_workflow;
end;
$$;

comment on function geneva.pause_workflow(bigint) is
'Pauses a workflow now (ready) or at the end of its running step (performing).';
