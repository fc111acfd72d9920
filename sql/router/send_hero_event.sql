-- geneva.send_hero_event: the cells' geneva.send_hero_event, on the router
-- (docs/cells.md).
--
-- Runs in the cell of the hero's partition (geneva._hero_hash), where the
-- hero's workflows live (a child created for another hero lives in its
-- parent's cell and is not reached by its own hero's events).
--
-- Through geneva._cell_send_hero_event, which names the caller in the
-- cell's action log as "actor" (geneva._router_actor).
--
-- Called by: applications and operators through the router.
-- Raises: what the cell's geneva.send_hero_event raises.
create or replace function geneva.send_hero_event(
  p_hero_type text,
  p_hero_id text,
  p_event text,
  p_payload jsonb default null,
  p_key text default null,
  p_start text default null
)
returns integer
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select geneva._cell_send_hero_event(p_hero_type, p_hero_id, p_event, p_payload, p_key, p_start,
    geneva._router_actor())
$$;

comment on function geneva.send_hero_event is
'The cells'' geneva.send_hero_event, run in the cell of the hero''s partition.';
