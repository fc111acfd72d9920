-- geneva.cells_definition_steps: every cell's geneva.definition_steps, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's steps of its current definitions, and its database's name as cell; the
-- router's geneva.definition_steps reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.definition_steps view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_definition_steps()
returns table (
  cell text,
  {{ index .view_columns "definition_steps" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.definition_steps v;
$$;

comment on function geneva.cells_definition_steps() is
'Every cell''s geneva.definition_steps, with the cell''s database name.';
