-- geneva.get_housekeeping_settings: the thresholds housekeeping uses when not
-- given others (the one row of geneva.housekeeping_settings): retention
-- (NULL: ended workflows are kept forever), stuck in progress after, stuck
-- scheduled after, recovery action, batch size; the round interval
-- (geneva.housekeep_if_due's when given none); how long the operators'
-- actions are kept (action retention) and the least it may be (its floor,
-- which only the schema's owner may lower); the runaway thresholds
-- (geneva.runaway_workflows: executions of a workflow, and of one step in
-- a row); history's partition interval, move_after and archive
-- (docs/history.md); and who set them last, when
-- (NULL: never, the table's defaults, migrations/001_create_schema.sql).
--
-- Called by: dashboards, operators, `geneva housekeep settings`,
-- goclient.HousekeepingSettings. Takes no locks.
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
  select s.retention, s.stuck_in_progress_after, s.stuck_scheduled_after, s.recovery_action, s.batch_size,
    s.round_interval, s.action_retention, s.action_retention_floor,
    s.runaway_executions, s.runaway_repeats, s.partition_interval, s.move_after, s.archive,
    s.updated_at, s.updated_by
  from geneva._housekeeping_settings() s;
$$;

comment on function geneva.get_housekeeping_settings() is
'The housekeeping settings: retention (NULL: forever), stuck thresholds, recovery action, batch size, round interval, the action log''s retention and its floor, the runaway thresholds; history''s partition interval, move_after and archive; who set them, when.';
