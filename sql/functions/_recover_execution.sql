-- geneva._recover_execution: recovers one execution that is stuck: in_progress
-- for too long (its worker died) or scheduled and overdue for too long (its
-- job was lost).
--
-- Called by: geneva.housekeep, once per candidate, after the candidate query.
-- Locks: the workflow row, then the execution row; both are checked again
-- under the locks, and nothing is done when the execution is no longer
-- active, or when a scheduled one's workflow is not ready (a paused
-- workflow's kept execution is never recovered).
--
-- p_action 'reattempt': the execution ends completed/recovered and the same
-- step is scheduled now. p_action 'cancel': it ends canceled/recovered and the
-- workflow is canceled. metadata.recovery_reason says which kind of stuck it
-- was. Returns whether it recovered the execution.
create or replace function geneva._recover_execution(p_execution_id bigint, p_action text)
returns boolean
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_workflow_id bigint;
  v_workflow geneva.workflows;
  v_execution geneva.step_executions;
  v_definition geneva.workflow_definitions;
  v_reason text;
begin
  select e.workflow_id into v_workflow_id from geneva.step_executions e where e.id = p_execution_id;
  select w.* into v_workflow from geneva.workflows w where w.id = v_workflow_id for no key update;
  select e.* into v_execution from geneva.step_executions e where e.id = p_execution_id for no key update;

  if v_execution.state is null or v_workflow.id is null then
    return false;
  elsif v_execution.state = 'in_progress' then
    v_reason := 'stuck_in_progress';
  elsif v_execution.state = 'scheduled' and v_workflow.state = 'ready' then
    v_reason := 'stuck_scheduled';
  else
    return false;
  end if;

  v_definition := geneva._definition(v_workflow.workflow_type);

  if p_action = 'cancel' then
    perform geneva._end_execution(
      v_execution.id, 'canceled', 'recovered',
      p_metadata => jsonb_build_object('recovery_reason', v_reason)
    );
    perform geneva._advance(v_workflow, v_definition, 'cancel', v_execution.step_name);
  else
    perform geneva._end_execution(
      v_execution.id, 'completed', 'recovered',
      p_metadata => jsonb_build_object('recovery_reason', v_reason)
    );
    perform geneva._advance(v_workflow, v_definition, 'same', v_execution.step_name);
  end if;
  return true;
end;
$$;
