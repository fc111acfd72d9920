-- geneva.cells_engine_metrics: every cell's geneva.engine_metrics, with a
-- cell column, on the router (docs/cells.md).
--
-- RUN ON ALL: each cell's samples, and its database's name as cell. The
-- router's geneva.engine_metrics merges them; a monitoring that labels the
-- cells apart reads this.
--
-- Called by: the router's geneva.engine_metrics view; monitoring through
-- the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_engine_metrics()
returns table (
  cell text,
  metric text,
  workflow_type text,
  step_name text,
  label text,
  value double precision
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, m.metric, m.workflow_type, m.step_name, m.label, m.value
  from geneva.engine_metrics m;
$$;

comment on function geneva.cells_engine_metrics() is
'Every cell''s geneva.engine_metrics, with the cell''s database name.';
