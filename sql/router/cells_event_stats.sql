-- geneva.cells_event_stats: every cell's geneva.event_stats, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's events sent, consumed and pending per type and event, and its database's name as cell; the
-- router's geneva.event_stats reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.event_stats view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_event_stats()
returns table (
  cell text,
  {{ index .view_columns "event_stats" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.event_stats v;
$$;

comment on function geneva.cells_event_stats() is
'Every cell''s geneva.event_stats, with the cell''s database name.';
