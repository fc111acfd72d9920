-- geneva.cells_paused_workflows: every cell's geneva.paused_workflows, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's paused workflows, and its database's name as cell; the
-- router's geneva.paused_workflows reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.paused_workflows view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_paused_workflows()
returns table (
  cell text,
  {{ index .view_columns "paused_workflows" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.paused_workflows v;
$$;

comment on function geneva.cells_paused_workflows() is
'Every cell''s geneva.paused_workflows, with the cell''s database name.';
