-- geneva.step_history: a workflow's step executions, in order.
--
-- Called by: applications, operators, goclient.StepHistory, `geneva show`.
-- Takes no locks.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow.
create or replace function geneva.step_history(p_workflow_id bigint)
returns setof geneva.step_executions
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  perform geneva.get_workflow(p_workflow_id);

  return query
  select e.*
  from geneva.step_executions e
  where e.workflow_id = p_workflow_id
  order by e.id;
end;
$$;

comment on function geneva.step_history(bigint) is
'A workflow''s step executions, in order.';
