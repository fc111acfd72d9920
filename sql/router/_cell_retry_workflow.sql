-- geneva._cell_retry_workflow: the cells' geneva.retry_workflow, in the cell
-- its id routes to, on the router (docs/cells.md).
--
-- p_actor is set as the cell's geneva.actor for the call
-- (geneva._router_actor), before the verb runs.
--
-- Called by: the router's retry_workflow.
-- Raises: what the cell's geneva.retry_workflow raises.
create or replace function geneva._cell_retry_workflow(p_workflow_id bigint, p_from_step text, p_actor text)
returns bigint
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_workflow_id;
  select geneva.retry_workflow(p_workflow_id, p_from_step)
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v);
$$;
