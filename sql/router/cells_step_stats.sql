-- geneva.cells_step_stats: every cell's geneva.step_stats, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's step statistics (percentiles do not add up across cells), and its database's name as cell; the
-- router's geneva.step_stats reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.step_stats view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_step_stats()
returns table (
  cell text,
  {{ index .view_columns "step_stats" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.step_stats v;
$$;

comment on function geneva.cells_step_stats() is
'Every cell''s geneva.step_stats, with the cell''s database name.';
