-- geneva.final_step_at: the cells' geneva.final_step_at, on the router (docs/cells.md).
--
-- Runs geneva.final_step_at in the cell holding the partition of p_workflow_id
-- (p_workflow_id & (P - 1): a cell's ids carry their partition). goclient
-- reads it with each workflow it reads (geneva ls, geneva show): a call to
-- the cell a workflow.
--
-- Called by: applications, operators, dashboards through the router.
-- Raises: what the cell's geneva.final_step_at raises.
create or replace function geneva.final_step_at(p_workflow_id bigint)
returns timestamptz
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_workflow_id;
$$;

comment on function geneva.final_step_at is
'The cells'' geneva.final_step_at, run in the cell its id routes to.';
