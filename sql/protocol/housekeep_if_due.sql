-- geneva.housekeep_if_due: one round of housekeeping (geneva.housekeep, with
-- the thresholds of geneva.housekeeping_settings) when none ran within
-- p_interval; else nothing. A NULL p_interval (not given) is the settings'
-- round interval, as every worker calls it unless configured otherwise.
--
-- Called by: every worker, at random times between a quarter and a half of
-- the interval apart, so that recovery goes on while any worker runs (no
-- leader to wait for); operators. It takes no thresholds: what a round
-- deletes and recovers is the operators' setting
-- (geneva.set_housekeeping_settings), not the caller's; geneva_worker may
-- call this, not geneva.housekeep.
--
-- The last round's start is the one row of geneva.housekeeping_rounds, read
-- on the real clock (now(), never geneva.fake_now); one more than the
-- interval in the future (which its guard refuses to write) counts as none.
-- (A round that started after this transaction did is a little in the
-- future of its now(), and counts.) Not due costs one
-- index read and takes no lock. When due, the row is locked with `skip
-- locked`: a caller that finds it held by another round returns NULL at once,
-- so two rounds never run at once. A round whose result says "more" (a batch
-- was full) leaves the last run time as it was, so the next call, by any
-- caller, runs the next round at once.
--
-- Locks: the housekeeping_rounds row (until the caller's transaction ends),
-- then what geneva.housekeep locks.
-- Returns geneva.housekeep's counts, or NULL when no round was due or another
-- caller was running one.
-- Raises: 22023 for a negative interval or one over 1000 years
-- (geneva._check_housekeeping_settings).
create or replace function geneva.housekeep_if_due(
  p_interval interval default null
)
returns jsonb
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_interval interval;
  v_last timestamptz;
  v_result jsonb;
begin
  -- guard: an interval given holds to the setting's rules
  perform geneva._check_housekeeping_settings(null, null, null, null, null, false, p_interval);
  -- not given: the setting (checked when set)
  v_interval := coalesce(p_interval, (geneva._housekeeping_settings()).round_interval);

  -- not due: a plain read, no lock
  select r.last_run_at into v_last
  from geneva.housekeeping_rounds r
  where r.singleton;
  if v_last > pg_catalog.now() - v_interval and v_last <= pg_catalog.now() + v_interval then
    return null;
  end if;
  -- the only writer of the rounds (sql/guards/housekeeping_rounds_guard.sql)
  perform pg_catalog.set_config('geneva.housekeeping_rounds', 'on', true);
  if v_last is null then
    -- the row was deleted by hand: put it back
    insert into geneva.housekeeping_rounds (singleton) values (true)
    on conflict do nothing;
  end if;

  -- due: take the row unless another round holds it, and check again (a
  -- round may have ended since the read above)
  select r.last_run_at into v_last
  from geneva.housekeeping_rounds r
  where r.singleton
  for update skip locked;
  if not found or v_last > pg_catalog.now() - v_interval and v_last <= pg_catalog.now() + v_interval then
    perform pg_catalog.set_config('geneva.housekeeping_rounds', '', true);
    return null;
  end if;
  perform pg_catalog.set_config('geneva.housekeeping_rounds', '', true);

  v_result := geneva.housekeep();

  perform pg_catalog.set_config('geneva.housekeeping_rounds', 'on', true);
  update geneva.housekeeping_rounds r
  set last_run_at = case
        when (v_result->>'more')::boolean then r.last_run_at
        else pg_catalog.now()
      end,
      last_result = v_result
  where r.singleton;
  perform pg_catalog.set_config('geneva.housekeeping_rounds', '', true);
  return v_result;
end;
$$;

comment on function geneva.housekeep_if_due(interval) is
'One round of housekeeping, with the settings'' thresholds, when none ran within the interval (NULL: the settings'' round interval; skip locked: never two at once); NULL otherwise.';
