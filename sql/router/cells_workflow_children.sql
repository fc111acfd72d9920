-- geneva.cells_workflow_children: every cell's geneva.workflow_children, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's children (a child lives in its parent's cell), and its database's name as cell; the
-- router's geneva.workflow_children reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.workflow_children view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_workflow_children()
returns table (
  cell text,
  {{ index .view_columns "workflow_children" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.workflow_children v;
$$;

comment on function geneva.cells_workflow_children() is
'Every cell''s geneva.workflow_children, with the cell''s database name.';
