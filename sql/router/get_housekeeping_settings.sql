-- geneva.get_housekeeping_settings: the cells' housekeeping settings, on
-- the router (docs/cells.md).
--
-- Every cell's (geneva._cells_get_housekeeping_settings, RUN ON ALL), the
-- most recently set of them: set through the router, every cell has the
-- same (set_housekeeping_settings sets them in every cell).
--
-- Called by: operators and dashboards through the router (`geneva
-- housekeep settings`).
-- Raises: what the cells' geneva.get_housekeeping_settings raises.
create or replace function geneva.get_housekeeping_settings()
returns table (
  retention interval,
  stuck_in_progress_after interval,
  stuck_scheduled_after interval,
  recovery_action text,
  batch_size integer,
  round_interval interval,
  action_retention interval,
  action_retention_floor interval,
  runaway_executions integer,
  runaway_repeats integer,
  partition_interval interval,
  move_after interval,
  archive text,
  updated_at timestamptz,
  updated_by text
)
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select s.*
  from geneva._cells_get_housekeeping_settings() s
  order by s.updated_at desc nulls last
  limit 1
$$;

comment on function geneva.get_housekeeping_settings() is
'The cells'' housekeeping settings: the most recently set (the same in every cell when set through the router).';
