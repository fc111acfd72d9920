-- geneva.pause_workflow: the cells' geneva.pause_workflow, on the router (docs/cells.md).
--
-- Runs geneva.pause_workflow in the cell holding the partition of p_workflow_id
-- (p_workflow_id & (P - 1): a cell's ids carry their partition), through
-- geneva._cell_pause_workflow, which names the caller in the cell's action log as
-- "actor" (geneva._router_actor).
--
-- Called by: operators through the router.
-- Raises: what the cell's geneva.pause_workflow raises.
create or replace function geneva.pause_workflow(p_workflow_id bigint)
returns geneva.workflows
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select r.* from geneva._cell_pause_workflow(p_workflow_id, geneva._router_actor()) r
$$;

comment on function geneva.pause_workflow is
'The cells'' geneva.pause_workflow, run in the cell its id routes to.';
