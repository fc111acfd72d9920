-- geneva.cells_awaiting_events: every cell's geneva.awaiting_events, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: the workflows awaiting an event in each cell, and its database's name as cell; the
-- router's geneva.awaiting_events reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.awaiting_events view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_awaiting_events()
returns table (
  cell text,
  {{ index .view_columns "awaiting_events" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.awaiting_events v;
$$;

comment on function geneva.cells_awaiting_events() is
'Every cell''s geneva.awaiting_events, with the cell''s database name.';
