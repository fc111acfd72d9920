-- geneva.cells_schedule_list: every cell's geneva.schedule_list, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's schedules (a schedule lives in its hero's cell), and its database's name as cell; the
-- router's geneva.schedule_list reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.schedule_list view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_schedule_list()
returns table (
  cell text,
  {{ index .view_columns "schedule_list" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.schedule_list v;
$$;

comment on function geneva.cells_schedule_list() is
'Every cell''s geneva.schedule_list, with the cell''s database name.';
