-- geneva.step_history: the cells' geneva.step_history, on the router (docs/cells.md).
--
-- Runs geneva.step_history in the cell holding the partition of p_workflow_id
-- (p_workflow_id & (P - 1): a cell's ids carry their partition).
--
-- Called by: applications, operators, dashboards through the router.
-- Raises: what the cell's geneva.step_history raises.
create or replace function geneva.step_history(p_workflow_id bigint)
returns setof geneva.step_executions
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_workflow_id;
$$;

comment on function geneva.step_history is
'The cells'' geneva.step_history, run in the cell its id routes to.';
