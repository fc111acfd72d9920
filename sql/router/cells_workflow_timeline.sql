-- geneva.cells_workflow_timeline: every cell's geneva.workflow_timeline, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's executions with the events they received, and its database's name as cell; the
-- router's geneva.workflow_timeline reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.workflow_timeline view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_workflow_timeline()
returns table (
  cell text,
  {{ index .view_columns "workflow_timeline" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.workflow_timeline v;
$$;

comment on function geneva.cells_workflow_timeline() is
'Every cell''s geneva.workflow_timeline, with the cell''s database name.';
