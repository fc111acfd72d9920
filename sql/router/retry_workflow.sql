-- geneva.retry_workflow: the cells' geneva.retry_workflow, on the router (docs/cells.md).
--
-- Runs geneva.retry_workflow in the cell holding the partition of p_workflow_id
-- (p_workflow_id & (P - 1): a cell's ids carry their partition).
--
-- Through geneva._cell_retry_workflow, which names the caller in the cell's
-- action log as "actor" (geneva._router_actor).
--
-- Called by: operators through the router.
-- Raises: what the cell's geneva.retry_workflow raises.
create or replace function geneva.retry_workflow(p_workflow_id bigint, p_from_step text default null)
returns bigint
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select geneva._cell_retry_workflow(p_workflow_id, p_from_step, geneva._router_actor())
$$;

comment on function geneva.retry_workflow is
'The cells'' geneva.retry_workflow, run in the cell its id routes to.';
