-- geneva._check_housekeeping_settings: refuses housekeeping thresholds no
-- round may use, and round intervals no setting may hold. A NULL threshold
-- or interval passes (its callers read it as "the setting" or "unchanged");
-- p_keep_forever (retention: none, ended workflows are kept forever) may not
-- be NULL nor come with a retention.
--
-- Called by: geneva.housekeep (one round's thresholds, no interval),
-- geneva.set_housekeeping_settings (the settings, the action log's
-- retention and its floor, the runaway thresholds, the history settings
-- too), geneva.housekeep_if_due (its interval, no thresholds).
-- Raises: 22004 for a NULL p_keep_forever; 22023 for an unknown recovery
-- action, a non-positive batch size or runaway threshold, a negative
-- interval or one over 1000 years, a retention with p_keep_forever, a
-- partition interval other than 1 day or 1 week, or an archive other than
-- 'drop' or 'detach'.
create or replace function geneva._check_housekeeping_settings(
  p_retention interval,
  p_stuck_in_progress_after interval,
  p_stuck_scheduled_after interval,
  p_recovery_action text,
  p_batch_size integer,
  p_keep_forever boolean,
  p_round_interval interval,
  p_action_retention interval default null,
  p_action_retention_floor interval default null,
  p_runaway_executions integer default null,
  p_runaway_repeats integer default null,
  p_partition_interval interval default null,
  p_move_after interval default null,
  p_archive text default null
)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_keep_forever is null then
    raise exception 'keep forever must not be null' using errcode = '22004';
  end if;
  if p_keep_forever and p_retention is not null then
    raise exception 'a retention cannot come with keep forever'
      using errcode = '22023',
            hint = 'Keeping ended workflows forever is having no retention: give one or the other.';
  end if;
  if p_recovery_action is not null and not exists (
    select from geneva._signal_effects() e where e.cause = 'housekeeping' and e.signal = p_recovery_action
  ) then
    raise exception 'unknown recovery action %', p_recovery_action
      using errcode = '22023',
            hint = pg_catalog.format('Recovery actions are %s.', (
              select pg_catalog.string_agg(e.signal, ' and ') from geneva._signal_effects() e where e.cause = 'housekeeping'
            ));
  end if;
  if p_batch_size < 1 then
    raise exception 'batch size must be positive' using errcode = '22023';
  end if;
  if p_partition_interval is not null and p_partition_interval not in (interval '1 day', interval '1 week') then
    raise exception 'partition interval % is neither a day nor a week', p_partition_interval
      using errcode = '22023',
            hint = 'History partitions span 1 day or 1 week (docs/history.md).';
  end if;
  if p_archive is not null and p_archive not in ('drop', 'detach') then
    raise exception 'unknown archive %', p_archive
      using errcode = '22023',
            hint = 'Expired history partitions are dropped (''drop'') or detached for geneva archive (''detach'').';
  end if;
  if p_runaway_executions < 1 or p_runaway_repeats < 1 then
    raise exception 'runaway thresholds must be positive' using errcode = '22023';
  end if;
  if p_retention < interval '0' or p_stuck_in_progress_after < interval '0'
    or p_stuck_scheduled_after < interval '0' or p_round_interval < interval '0'
    or p_action_retention < interval '0' or p_action_retention_floor < interval '0'
    or p_move_after < interval '0' then
    raise exception 'housekeeping intervals must not be negative' using errcode = '22023';
  end if;
  -- (far past 1000 years, now() minus the interval leaves timestamptz's
  -- range; 1000 years reads as "never")
  if extract(epoch from p_retention) > 31557600000 or extract(epoch from p_stuck_in_progress_after) > 31557600000
    or extract(epoch from p_stuck_scheduled_after) > 31557600000 or extract(epoch from p_round_interval) > 31557600000
    or extract(epoch from p_action_retention) > 31557600000
    or extract(epoch from p_action_retention_floor) > 31557600000
    or extract(epoch from p_move_after) > 31557600000 then
    raise exception 'housekeeping intervals are at most 1000 years' using errcode = '22023';
  end if;
end;
$$;
