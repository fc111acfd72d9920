-- geneva.set_housekeeping_settings: sets the thresholds housekeeping uses
-- when not given others: every worker's periodic round
-- (geneva.housekeep_if_due) and geneva.housekeep without arguments; and the
-- round interval, how long after a round's start the next is due
-- (geneva.housekeep_if_due given none, as workers call it).
--
-- p_partition_interval ('1 day' or '1 week': the width of the history
-- partitions created from now on; those there keep theirs), p_move_after
-- (how long an ended workflow stays in the live tables before housekeeping
-- moves it into history) and p_archive ('drop' or 'detach': what retention
-- does with an expired history partition) are history's (docs/history.md).
--
-- p_runaway_executions and p_runaway_repeats are the runaway thresholds
-- (geneva.runaway_workflows): a workflow with more executions, or one step
-- executed more times in a row, is flagged by housekeeping.
--
-- Called by: operators, `geneva housekeep settings`,
-- goclient.SetHousekeepingSettings. Granted to operators only: the settings
-- decide what is deleted (retention) and what running steps are taken for
-- dead and recovered, how (docs/security.md).
--
-- Each argument not given (NULL) leaves its setting as it is; none given
-- changes nothing. NULL cannot say "keep ended workflows forever", so
-- p_keep_forever => true does (the retention becomes NULL); a later
-- p_retention sets one again. Records session_user and the time in
-- updated_by and updated_at when something is given.
--
-- The operators' actions have their own retention (p_action_retention),
-- apart from the workflows': never below its floor
-- (p_action_retention_floor), so that an operator cannot erase the log of
-- what it did. Any caller may raise the floor; only the schema's owner (a
-- member of the role that owns schema geneva: session_user, since this runs
-- as the owner) may lower it. An action retention given below the floor is
-- refused; raising the floor above the retention keeps the actions for the
-- floor.
--
-- Locks: the settings row (an update), until the caller's transaction ends.
-- Records the action (geneva._log_action) when something is given.
-- Returns the settings, as geneva.get_housekeeping_settings.
-- Raises: 22004 for a NULL p_keep_forever; 22023 for an unknown recovery
-- action, a non-positive batch size or runaway threshold, a negative
-- interval or one over 1000 years, a retention with p_keep_forever, a
-- partition interval other than a day or a week, an archive other than
-- 'drop' or 'detach' (geneva._check_housekeeping_settings), or an action retention below the
-- floor; 42501 for a floor lowered by a role other than the owner. Nothing
-- is written on any error.
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
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_settings geneva.housekeeping_settings;
begin
  perform geneva._check_housekeeping_settings(
    p_retention, p_stuck_in_progress_after, p_stuck_scheduled_after, p_recovery_action, p_batch_size, p_keep_forever,
    p_round_interval, p_action_retention, p_action_retention_floor, p_runaway_executions, p_runaway_repeats,
    p_partition_interval, p_move_after, p_archive
  );
  v_settings := geneva._housekeeping_settings(); -- (the row is there)

  -- guard: the action log's floor is lowered by the owner alone, and its
  -- retention is never below the floor
  if p_action_retention_floor < v_settings.action_retention_floor and not pg_catalog.pg_has_role(
    session_user, (select n.nspowner from pg_catalog.pg_namespace n where n.nspname = 'geneva'), 'MEMBER'
  ) then
    raise exception 'only the owner of schema geneva may lower the action log''s retention floor'
      using errcode = '42501',
            detail = pg_catalog.format('The floor is %s; %s asked for %s.',
              v_settings.action_retention_floor, session_user, p_action_retention_floor),
            hint = 'Operators may raise it; the log of what they did is not theirs to shorten.';
  end if;
  if p_action_retention < coalesce(p_action_retention_floor, v_settings.action_retention_floor) then
    raise exception 'action retention % is below its floor %', p_action_retention,
      coalesce(p_action_retention_floor, v_settings.action_retention_floor)
      using errcode = '22023',
            hint = 'The schema''s owner may lower the floor (p_action_retention_floor).';
  end if;

  if p_keep_forever or p_retention is not null or p_stuck_in_progress_after is not null
    or p_stuck_scheduled_after is not null or p_recovery_action is not null or p_batch_size is not null
    or p_round_interval is not null or p_action_retention is not null or p_action_retention_floor is not null
    or p_runaway_executions is not null or p_runaway_repeats is not null
    or p_partition_interval is not null or p_move_after is not null or p_archive is not null then
    -- the only writer of the settings (sql/guards/housekeeping_settings_guard.sql)
    perform pg_catalog.set_config('geneva.housekeeping_settings', 'on', true);
    update geneva.housekeeping_settings s
    set retention = case when p_keep_forever then null else coalesce(p_retention, s.retention) end,
        stuck_in_progress_after = coalesce(p_stuck_in_progress_after, s.stuck_in_progress_after),
        stuck_scheduled_after = coalesce(p_stuck_scheduled_after, s.stuck_scheduled_after),
        recovery_action = coalesce(p_recovery_action, s.recovery_action),
        batch_size = coalesce(p_batch_size, s.batch_size),
        round_interval = coalesce(p_round_interval, s.round_interval),
        action_retention = coalesce(p_action_retention, s.action_retention),
        action_retention_floor = coalesce(p_action_retention_floor, s.action_retention_floor),
        runaway_executions = coalesce(p_runaway_executions, s.runaway_executions),
        runaway_repeats = coalesce(p_runaway_repeats, s.runaway_repeats),
        -- (stored as written: '7 days' is '1 week', '24 hours' '1 day')
        partition_interval = case
          when p_partition_interval = interval '1 week' then interval '1 week'
          when p_partition_interval = interval '1 day' then interval '1 day'
          else s.partition_interval end,
        move_after = coalesce(p_move_after, s.move_after),
        archive = coalesce(p_archive, s.archive),
        updated_at = geneva.now(),
        updated_by = session_user
    where s.singleton;
    perform pg_catalog.set_config('geneva.housekeeping_settings', '', true);

    perform geneva._log_action(
      'set_housekeeping_settings', null,
      jsonb_strip_nulls(jsonb_build_object(
        'retention', p_retention, 'stuck_in_progress_after', p_stuck_in_progress_after,
        'stuck_scheduled_after', p_stuck_scheduled_after, 'recovery_action', p_recovery_action,
        'batch_size', p_batch_size, 'keep_forever', nullif(p_keep_forever, false),
        'round_interval', p_round_interval, 'action_retention', p_action_retention,
        'action_retention_floor', p_action_retention_floor,
        'runaway_executions', p_runaway_executions, 'runaway_repeats', p_runaway_repeats,
        'partition_interval', p_partition_interval, 'move_after', p_move_after, 'archive', p_archive
      )),
      (select to_jsonb(s) from geneva.get_housekeeping_settings() s)
    );
  end if;

  return query select * from geneva.get_housekeeping_settings();
end;
$$;

comment on function geneva.set_housekeeping_settings(interval, interval, interval, text, integer, boolean, interval, interval, interval, integer, integer, interval, interval, text) is
'Sets the housekeeping settings (operators): each argument not given stays as it is; p_keep_forever => true keeps ended workflows forever; p_round_interval is how often rounds run; the action log''s retention, never below its floor (lowered by the owner only); the runaway thresholds; history''s partition interval (1 day or 1 week), move_after and archive (drop or detach).';
