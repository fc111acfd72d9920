-- geneva.cells_stuck_executions: every cell's geneva.stuck_executions, with a cell column, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's stuck executions, with the thresholds given (the router session's geneva.stuck_in_progress_after and geneva.stuck_scheduled_after, set in the cell for the call; null: the cell's housekeeping settings'), and its database's name as cell; the
-- router's geneva.stuck_executions reads it. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: the router's geneva.stuck_executions view; dashboards and monitoring
-- through the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_stuck_executions(p_stuck_in_progress_after text, p_stuck_scheduled_after text)
returns table (
  cell text,
  {{ index .view_columns "stuck_executions" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, v.*
  from pg_catalog.set_config('geneva.stuck_in_progress_after', coalesce(p_stuck_in_progress_after, ''), true) a(x)
  cross join pg_catalog.set_config('geneva.stuck_scheduled_after', coalesce(p_stuck_scheduled_after, ''), true) b(y)
  cross join lateral (
    select s.* from geneva.stuck_executions s where a.x is not null and b.y is not null offset 0
  ) v;
$$;

comment on function geneva.cells_stuck_executions(text, text) is
'Every cell''s geneva.stuck_executions, with the cell''s database name.';
