-- geneva._lock_active_execution: locks a workflow's active (scheduled or
-- in_progress) execution, if it has one, and returns it (a row of NULLs
-- otherwise).
--
-- Called by: the operator functions and the hero trigger, which hold the
-- workflow's lock already (lock order: workflow, then execution).
create or replace function geneva._lock_active_execution(p_workflow_id bigint)
returns geneva.step_executions
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_execution geneva.step_executions;
begin
  select e.* into v_execution
  from geneva.step_executions e
  where e.workflow_id = p_workflow_id
    and e.state in ('scheduled', 'in_progress')
  for no key update;
  return v_execution;
end;
$$;
