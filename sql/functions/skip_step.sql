-- geneva.skip_step: an operator skips the step that would run next.
--
-- Called by: operators and applications (any SQL client, goclient, the CLI).
-- On a ready or paused workflow: the scheduled execution, if there is one, is
-- skipped (skipped/skipped_externally); the step after it (after
-- next_step_name when there is none, as for a workflow paused by an error) is
-- scheduled after its own wait, or the workflow finishes. The workflow is
-- ready afterwards.
--
-- Locks: the workflow row, then its active execution. Records the action
-- (geneva._log_action).
-- Returns the workflow row after the call.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- performing, finished or canceled workflow.
create or replace function geneva.skip_step(p_workflow_id bigint)
returns geneva.workflows
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow geneva.workflows := geneva._lock_workflow(p_workflow_id);
  v_execution geneva.step_executions;
  v_definition geneva.workflow_definitions;
  v_effect record;
  v_skipped text;
begin
  if v_workflow.state not in ('ready', 'paused') then
    raise exception 'workflow % cannot skip a step', p_workflow_id
      using errcode = '55000',
            detail = format('Workflow is %s.', v_workflow.state),
            hint = case
              when v_workflow.state = 'performing' then 'Wait until its running step ends.'
              else 'Only ready and paused workflows can skip a step.'
            end,
            table = 'workflows';
  end if;

  v_execution := geneva._lock_active_execution(p_workflow_id);
  select e.* into strict v_effect
  from geneva._signal_effects() e
  where e.cause = 'operator' and e.signal = 'skip';

  if v_execution.id is not null then
    perform geneva._end_execution(v_execution, v_effect.execution_state, v_effect.outcome);
  end if;

  v_definition := geneva._definition(v_workflow.workflow_type);

  v_skipped := coalesce(v_execution.step_name, v_workflow.next_step_name);
  v_workflow := geneva._advance(v_workflow, v_definition, v_effect.workflow_move, v_skipped);
  perform geneva._log_action(
    'skip_step', p_workflow_id, '{}', geneva._action_result(v_workflow) || jsonb_build_object('skipped', v_skipped)
  );
  return v_workflow;
end;
$$;

comment on function geneva.skip_step(bigint) is
'Skips the step that would run next of a ready or paused workflow and schedules the one after it.';
