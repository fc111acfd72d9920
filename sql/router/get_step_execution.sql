-- geneva.get_step_execution: the cells' geneva.get_step_execution, on the router (docs/cells.md).
--
-- Runs geneva.get_step_execution in the cell holding the partition of p_execution_id
-- (p_execution_id & (P - 1): a cell's ids carry their partition).
--
-- Called by: applications, operators, dashboards through the router.
-- Raises: what the cell's geneva.get_step_execution raises.
create or replace function geneva.get_step_execution(p_execution_id bigint)
returns geneva.step_executions
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_execution_id;
$$;

comment on function geneva.get_step_execution is
'The cells'' geneva.get_step_execution, run in the cell its id routes to.';
