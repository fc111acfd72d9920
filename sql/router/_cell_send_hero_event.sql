-- geneva._cell_send_hero_event: the cells' geneva.send_hero_event, in the
-- cell of the hero's partition (geneva._hero_hash), on the router
-- (docs/cells.md).
--
-- p_actor is set as the cell's geneva.actor for the call
-- (geneva._router_actor), before the verb runs.
--
-- Called by: the router's send_hero_event.
-- Raises: what the cell's geneva.send_hero_event raises.
create or replace function geneva._cell_send_hero_event(
  p_hero_type text,
  p_hero_id text,
  p_event text,
  p_payload jsonb,
  p_key text,
  p_start text,
  p_actor text
)
returns integer
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on geneva._hero_hash(p_hero_type, p_hero_id);
  select geneva.send_hero_event(p_hero_type, p_hero_id, p_event, p_payload, p_key, p_start)
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v);
$$;
