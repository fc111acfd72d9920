-- geneva._cell_send_event: the cells' geneva.send_event, in the cell its
-- id routes to, on the router (docs/cells.md).
--
-- p_actor is set as the cell's geneva.actor for the call
-- (geneva._router_actor), before the verb runs.
--
-- Called by: the router's send_event.
-- Raises: what the cell's geneva.send_event raises.
create or replace function geneva._cell_send_event(
  p_workflow_id bigint,
  p_event text,
  p_payload jsonb,
  p_key text,
  p_actor text
)
returns boolean
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_workflow_id;
  select geneva.send_event(p_workflow_id, p_event, p_payload, p_key)
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v);
$$;
