-- geneva.cells_limit_usage: every cell's geneva.limit_usage, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's limit usage (each cell counts its own), and its database's name as cell; the
-- router's geneva.limit_usage reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.limit_usage view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_limit_usage()
returns table (
  cell text,
  {{ index .view_columns "limit_usage" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.limit_usage v;
$$;

comment on function geneva.cells_limit_usage() is
'Every cell''s geneva.limit_usage, with the cell''s database name.';
