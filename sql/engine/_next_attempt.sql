-- geneva._next_attempt: the attempt number of a step's next execution: one
-- more than its latest execution's, or 1.
--
-- Called by: resume_workflow and schedule_step, which run a step again
-- without the execution before it at hand. Reads the workflow's executions
-- newest first (step_executions_workflow_id); takes no locks.
create or replace function geneva._next_attempt(p_workflow_id bigint, p_step_name text)
returns integer
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_attempt integer;
begin
  select e.attempt + 1 into v_attempt
  from geneva.step_executions e
  where e.workflow_id = p_workflow_id
    and e.step_name = p_step_name
  order by e.id desc
  limit 1;
  return coalesce(v_attempt, 1);
end;
$$;
