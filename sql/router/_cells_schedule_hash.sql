-- geneva._cells_schedule_hash: the hash of the hero of the schedule of a
-- name, in whichever cell has it, on the router (docs/cells.md).
--
-- RUN ON ALL, reading each cell's geneva.schedule_list: a row from the cell
-- that holds the schedule (a schedule lives in its hero's cell), none from
-- the others. The hash is geneva._hero_hash's, so RUN ON it reaches that
-- cell.
--
-- Called by: the router's create_schedule, pause_schedule, resume_schedule,
-- delete_schedule.
create or replace function geneva._cells_schedule_hash(p_name text)
returns setof integer
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.hashtext(s.hero_type operator(pg_catalog.||) ':' operator(pg_catalog.||) s.hero_id)
  from geneva.schedule_list s
  where s.name operator(pg_catalog.=) p_name;
$$;
