-- geneva.skip_step: the cells' geneva.skip_step, on the router (docs/cells.md).
--
-- Runs geneva.skip_step in the cell holding the partition of p_workflow_id
-- (p_workflow_id & (P - 1): a cell's ids carry their partition), through
-- geneva._cell_skip_step, which names the caller in the cell's action log as
-- "actor" (geneva._router_actor).
--
-- Called by: operators through the router.
-- Raises: what the cell's geneva.skip_step raises.
create or replace function geneva.skip_step(p_workflow_id bigint)
returns geneva.workflows
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select r.* from geneva._cell_skip_step(p_workflow_id, geneva._router_actor()) r
$$;

comment on function geneva.skip_step is
'The cells'' geneva.skip_step, run in the cell its id routes to.';
