-- geneva.cells_step_errors: every cell's geneva.step_errors, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's executions that ended in an error, and its database's name as cell; the
-- router's geneva.step_errors reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.step_errors view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_step_errors()
returns table (
  cell text,
  {{ index .view_columns "step_errors" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.step_errors v;
$$;

comment on function geneva.cells_step_errors() is
'Every cell''s geneva.step_errors, with the cell''s database name.';
