-- geneva.cells_workflow_blockers: every cell's geneva.workflow_blockers, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: what holds each cell's workflows, and its database's name as cell; the
-- router's geneva.workflow_blockers reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.workflow_blockers view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_workflow_blockers()
returns table (
  cell text,
  {{ index .view_columns "workflow_blockers" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.workflow_blockers v;
$$;

comment on function geneva.cells_workflow_blockers() is
'Every cell''s geneva.workflow_blockers, with the cell''s database name.';
