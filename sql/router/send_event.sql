-- geneva.send_event: the cells' geneva.send_event, on the router (docs/cells.md).
--
-- Runs geneva.send_event in the cell holding the partition of p_workflow_id
-- (p_workflow_id & (P - 1): a cell's ids carry their partition).
--
-- Through geneva._cell_send_event, which names the caller in the cell's
-- action log as "actor" (geneva._router_actor).
--
-- Called by: applications and operators through the router.
-- Raises: what the cell's geneva.send_event raises.
create or replace function geneva.send_event(p_workflow_id bigint,
  p_event text,
  p_payload jsonb default null,
  p_key text default null)
returns boolean
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select geneva._cell_send_event(p_workflow_id, p_event, p_payload, p_key, geneva._router_actor())
$$;

comment on function geneva.send_event is
'The cells'' geneva.send_event, run in the cell its id routes to.';
