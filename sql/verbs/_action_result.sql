-- geneva._action_result: what an operator verb left a workflow as, for its
-- row in geneva.operator_actions: its state, the action requested of it
-- (a performing workflow's pause or cancel, applied at the step boundary)
-- and the step that would run next, each when set.
--
-- Called by: pause_workflow, resume_workflow, cancel_workflow, skip_step,
-- schedule_step (through geneva._log_action). Takes no locks.
create or replace function geneva._action_result(p_workflow geneva.workflows)
returns jsonb
language sql
immutable
set search_path = pg_catalog, pg_temp
as $$
  select jsonb_strip_nulls(jsonb_build_object(
    'state', p_workflow.state,
    'requested_action', p_workflow.requested_action,
    'next_step_name', p_workflow.next_step_name
  ));
$$;
