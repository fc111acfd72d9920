-- geneva.cells_step_throughput: every cell's geneva.step_throughput, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's executions ended per minute and outcome, and its database's name as cell; the
-- router's geneva.step_throughput reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.step_throughput view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_step_throughput()
returns table (
  cell text,
  {{ index .view_columns "step_throughput" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.step_throughput v;
$$;

comment on function geneva.cells_step_throughput() is
'Every cell''s geneva.step_throughput, with the cell''s database name.';
