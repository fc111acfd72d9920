-- geneva.set_housekeeping_settings: the housekeeping settings of every
-- cell, on the router (docs/cells.md).
--
-- Each cell sets the same (geneva._cells_set_housekeeping_settings, RUN ON
-- ALL, in parallel; each logs its own action, the router's caller as
-- actor); returns the settings of one of them (the most recently set).
-- Each cell commits on its own: when one refuses (22023, as every one would
-- for bad input), another may have set them.
--
-- Called by: operators through the router (`geneva housekeep settings`).
-- Raises: what the cells' geneva.set_housekeeping_settings raises.
create or replace function geneva.set_housekeeping_settings(
  p_retention interval default null,
  p_stuck_in_progress_after interval default null,
  p_stuck_scheduled_after interval default null,
  p_recovery_action text default null,
  p_batch_size integer default null,
  p_keep_forever boolean default false,
  p_round_interval interval default null,
  p_action_retention interval default null,
  p_action_retention_floor interval default null,
  p_runaway_executions integer default null,
  p_runaway_repeats integer default null,
  p_partition_interval interval default null,
  p_move_after interval default null,
  p_archive text default null
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
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select s.*
  from geneva._cells_set_housekeeping_settings(
    p_retention, p_stuck_in_progress_after, p_stuck_scheduled_after, p_recovery_action, p_batch_size,
    p_keep_forever, p_round_interval, p_action_retention, p_action_retention_floor,
    p_runaway_executions, p_runaway_repeats, p_partition_interval, p_move_after, p_archive,
    geneva._router_actor()
  ) s
  order by s.updated_at desc nulls last
  limit 1
$$;

comment on function geneva.set_housekeeping_settings(interval, interval, interval, text, integer, boolean, interval, interval, interval, integer, integer, interval, interval, text) is
'The housekeeping settings of every cell, set alike; returns them.';
