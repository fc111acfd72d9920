-- geneva.cells_action_log: every cell's geneva.action_log, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: the operator actions each cell logged, and its database's name as cell; the
-- router's geneva.action_log reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.action_log view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_action_log()
returns table (
  cell text,
  {{ index .view_columns "action_log" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.action_log v;
$$;

comment on function geneva.cells_action_log() is
'Every cell''s geneva.action_log, with the cell''s database name.';
