-- geneva._cells_set_housekeeping_settings: every cell's
-- geneva.set_housekeeping_settings, on the router (docs/cells.md).
--
-- RUN ON ALL: each cell sets the same, in parallel, and returns its
-- settings; p_actor is set as the cell's geneva.actor for the call
-- (geneva._router_actor), before the verb runs.
--
-- Called by: the router's set_housekeeping_settings.
-- Raises: what the cells' geneva.set_housekeeping_settings raises.
create or replace function geneva._cells_set_housekeeping_settings(
  p_retention interval,
  p_stuck_in_progress_after interval,
  p_stuck_scheduled_after interval,
  p_recovery_action text,
  p_batch_size integer,
  p_keep_forever boolean,
  p_round_interval interval,
  p_action_retention interval,
  p_action_retention_floor interval,
  p_runaway_executions integer,
  p_runaway_repeats integer,
  p_partition_interval interval,
  p_move_after interval,
  p_archive text,
  p_actor text
)
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
  select s.*
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v)
  cross join lateral geneva.set_housekeeping_settings(
    p_retention, p_stuck_in_progress_after, p_stuck_scheduled_after,
    p_recovery_action operator(pg_catalog.||) pg_catalog.left(a.v, 0), p_batch_size, p_keep_forever,
    p_round_interval, p_action_retention, p_action_retention_floor, p_runaway_executions, p_runaway_repeats,
    p_partition_interval, p_move_after, p_archive
  ) s;
$$;
