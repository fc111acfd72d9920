-- geneva.get_workflow: the cells' geneva.get_workflow, on the router (docs/cells.md).
--
-- Runs geneva.get_workflow in the cell holding the partition of p_workflow_id
-- (p_workflow_id & (P - 1): a cell's ids carry their partition).
--
-- Called by: applications, operators, dashboards through the router.
-- Raises: what the cell's geneva.get_workflow raises.
create or replace function geneva.get_workflow(p_workflow_id bigint)
returns geneva.workflows
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_workflow_id;
$$;

comment on function geneva.get_workflow is
'The cells'' geneva.get_workflow, run in the cell its id routes to.';
