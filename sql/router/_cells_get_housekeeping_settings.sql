-- geneva._cells_get_housekeeping_settings: every cell's housekeeping
-- settings, on the router (docs/cells.md).
--
-- RUN ON ALL: a row a cell.
--
-- Called by: the router's get_housekeeping_settings.
-- Raises: what the cells' geneva.get_housekeeping_settings raises.
create or replace function geneva._cells_get_housekeeping_settings()
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
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select s.* from geneva.get_housekeeping_settings() s;
$$;
