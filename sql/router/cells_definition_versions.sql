-- geneva.cells_definition_versions: every cell's geneva.definition_versions, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's definition versions (the same in every cell when defined through the router or by the same workers), and its database's name as cell; the
-- router's geneva.definition_versions reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.definition_versions view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_definition_versions()
returns table (
  cell text,
  {{ index .view_columns "definition_versions" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.definition_versions v;
$$;

comment on function geneva.cells_definition_versions() is
'Every cell''s geneva.definition_versions, with the cell''s database name.';
