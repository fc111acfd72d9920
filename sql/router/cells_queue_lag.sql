-- geneva.cells_queue_lag: every cell's geneva.queue_lag, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's queues (a River a cell), and its database's name as cell; the
-- router's geneva.queue_lag reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.queue_lag view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_queue_lag()
returns table (
  cell text,
  {{ index .view_columns "queue_lag" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.queue_lag v;
$$;

comment on function geneva.cells_queue_lag() is
'Every cell''s geneva.queue_lag, with the cell''s database name.';
