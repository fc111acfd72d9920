-- geneva._cell_schedule_step: the cells' geneva.schedule_step, in the cell
-- its id routes to, on the router (docs/cells.md).
--
-- p_actor is set as the cell's geneva.actor for the call
-- (geneva._router_actor), before the verb runs.
--
-- Called by: the router's schedule_step.
-- Raises: what the cell's geneva.schedule_step raises.
create or replace function geneva._cell_schedule_step(p_workflow_id bigint, p_step_name text, p_actor text)
returns geneva.workflows
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_workflow_id;
  select r.*
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v)
  cross join lateral geneva.schedule_step(p_workflow_id operator(pg_catalog.+) (0 operator(pg_catalog.*) pg_catalog.length(a.v)), p_step_name) r;
$$;
