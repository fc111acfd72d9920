-- geneva._archive_horizon: the last day geneva archive may archive before
-- (docs/history.md, "Archive"): a partition whose range ends on or before it
-- has expired, its interval ended (midnight UTC) more than the retention
-- ago, as housekeeping's retention reckons. Archiving younger history would
-- drop workflows that retention still keeps, and a partition whose day is
-- recent may still receive workflows (a tree moves when its root ends).
--
-- Called by: geneva.archive_partitions, geneva.drop_archived_partition.
-- Raises: 22023 when p_before is after the horizon, or when the retention
-- is NULL (ended workflows are kept for ever: nothing expires).
create or replace function geneva._archive_horizon(p_before date)
returns date
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_retention interval;
  v_horizon date;
begin
  select s.retention into v_retention from geneva.housekeeping_settings s;
  if v_retention is null then
    raise exception 'nothing in history has expired: the retention keeps ended workflows for ever'
      using errcode = '22023',
            hint = 'Set a retention (geneva.set_housekeeping_settings) to archive what it no longer keeps.';
  end if;
  v_horizon := ((geneva.now() - v_retention) at time zone 'UTC')::date;
  if p_before > v_horizon then
    raise exception 'cannot archive before %: history is kept until %', p_before, v_horizon
      using errcode = '22023',
            detail = format('The retention is %s: a partition expires when its range ended that long ago.', v_retention),
            hint = format('Archive before %s or earlier.', v_horizon);
  end if;
  return v_horizon;
end;
$$;
