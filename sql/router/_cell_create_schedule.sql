-- geneva._cell_create_schedule: the cells' geneva.create_schedule, in the
-- cell of a hash (the hero's, geneva._hero_hash), on the router
-- (docs/cells.md).
--
-- p_actor is set as the cell's geneva.actor for the call
-- (geneva._router_actor), before the verb runs.
--
-- Called by: the router's create_schedule.
-- Raises: what the cell's geneva.create_schedule raises.
create or replace function geneva._cell_create_schedule(
  p_hash integer,
  p_name text,
  p_cron text,
  p_workflow_type text,
  p_hero_type text,
  p_hero_id text,
  p_timezone text,
  p_catch_up text,
  p_allow_multiple boolean,
  p_actor text
)
returns bigint
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_hash;
  select geneva.create_schedule(
    p_name, p_cron, p_workflow_type, p_hero_type, p_hero_id, p_timezone, p_catch_up, p_allow_multiple
  )
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v);
$$;
