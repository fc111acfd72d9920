-- geneva._skip_step: the one implementation of geneva.skip_step (see there: what
-- it does, what it locks and raises), which records its action
-- (geneva._log_action) with p_bulk_action_id: the id of the
-- geneva.bulk_workflows call it is part of, or NULL. A parameter, not a
-- setting: a caller cannot name a bulk call it did not make.
--
-- Called by: geneva.skip_step (NULL), geneva.bulk_workflows (its own row's id).
-- Raises: as geneva.skip_step.
create or replace function geneva._skip_step(p_workflow_id bigint, p_bulk_action_id bigint)
returns geneva.workflows
language plpgsql
volatile
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
    'skip_step', p_workflow_id, '{}', geneva._action_result(v_workflow) || jsonb_build_object('skipped', v_skipped),
    p_bulk_action_id => p_bulk_action_id
  );
  return v_workflow;
end;
$$;
