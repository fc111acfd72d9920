-- geneva.delete_schedule: the cells' geneva.delete_schedule, on the router
-- (docs/cells.md).
--
-- A schedule lives in its hero's cell (create_schedule): the cell that has
-- one of this name (geneva._cells_schedule_hash, RUN ON ALL) runs the verb
-- (geneva._cell_delete_schedule). When no cell has it, the first partition's
-- cell answers (P0002, as in one database). The caller's name goes into the
-- cell's action log as "actor" (geneva._router_actor).
--
-- Called by: operators through the router.
-- Raises: what the cell's geneva.delete_schedule raises.
create or replace function geneva.delete_schedule(p_name text)
returns geneva.schedules
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select r.*
  from geneva._cell_delete_schedule(
    coalesce((select h from geneva._cells_schedule_hash(p_name) h limit 1), 0),
    p_name, geneva._router_actor()
  ) r
$$;

comment on function geneva.delete_schedule(text) is
'The cells'' geneva.delete_schedule, run in the cell of the schedule''s hero.';
