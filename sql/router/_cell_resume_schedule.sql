-- geneva._cell_resume_schedule: the cells' geneva.resume_schedule, in the cell
-- of a hash (the schedule's hero's, geneva._cells_schedule_hash), on the
-- router (docs/cells.md).
--
-- p_actor is set as the cell's geneva.actor for the call
-- (geneva._router_actor), before the verb runs.
--
-- Called by: the router's resume_schedule.
-- Raises: what the cell's geneva.resume_schedule raises.
create or replace function geneva._cell_resume_schedule(p_hash integer, p_name text, p_actor text)
returns geneva.schedules
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_hash;
  select r.*
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v)
  cross join lateral geneva.resume_schedule(p_name operator(pg_catalog.||) pg_catalog.left(a.v, 0)) r;
$$;
