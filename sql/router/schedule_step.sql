-- geneva.schedule_step: the cells' geneva.schedule_step, on the router (docs/cells.md).
--
-- Runs geneva.schedule_step in the cell holding the partition of
-- p_workflow_id (p_workflow_id & (P - 1): a cell's ids carry their
-- partition), through geneva._cell_schedule_step, which names the caller in
-- the cell's action log as "actor" (geneva._router_actor).
--
-- Called by: operators through the router.
-- Raises: what the cell's geneva.schedule_step raises.
create or replace function geneva.schedule_step(p_workflow_id bigint, p_step_name text default null)
returns geneva.workflows
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select r.* from geneva._cell_schedule_step(p_workflow_id, p_step_name, geneva._router_actor()) r
$$;

comment on function geneva.schedule_step is
'The cells'' geneva.schedule_step, run in the cell its id routes to.';
