-- geneva._cron_previous: a schedule's latest slot at or before p_at: the
-- instant (geneva._cron_instant, the DST rule) of the greatest wall-clock
-- minute, in p_timezone, that the cron expression matches and whose instant
-- is not after p_at. NULL when there is none within ten years before p_at.
-- What catch-up `latest` and `none` fire, and where resuming such a
-- schedule puts its next slot.
--
-- The mirror of geneva._cron_next: walks days backwards from p_at's,
-- skipping months that do not match, so the cost is a loop over the days
-- back to the latest matching one (a leap day: four years, mostly skipped
-- months), however many slots lie between: a schedule of every minute of
-- January asked in November walks ten months and a day, not the minutes of
-- January.
--
-- The wall-clock minutes whose instant is not after p_at are those up to
-- the zone's clock at p_at and, while the hour repeated when clocks go back
-- runs its second time, those up to where the clock stood before it went
-- back (their first occurrence is past). The DST rule is monotonic (a later
-- wall-clock time never fires earlier), so that last minute is found by
-- bisection, only when the minute after the clock's has already happened.
--
-- Called by: geneva.fire_schedules, geneva.resume_schedule; tests
-- (tests/cron_test.go holds it to geneva._cron_next). Takes no locks.
-- Raises: 22023 for a bad expression (geneva._cron_parse).
create or replace function geneva._cron_previous(p_cron text, p_timezone text, p_at timestamptz)
returns timestamptz
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_cron record;
  v_wall timestamp := date_trunc('minute', p_at at time zone p_timezone);
  v_low integer;
  v_high integer;
  v_middle integer;
  v_day date;
  v_to integer;
  v_first date;
  v_time integer;
  v_hour integer;
  v_minute integer;
  v_day_matches boolean;
  v_dom_matches boolean;
  v_dow_matches boolean;
begin
  if p_cron is null or p_timezone is null or p_at is null then
    return null;
  end if;
  select * into v_cron from geneva._cron_parse(p_cron);
  -- guard: the repeated hour's second time: minutes ahead of the clock whose first occurrence is past
  if geneva._cron_instant(v_wall + interval '1 minute', p_timezone) <= p_at then
    v_low := 1; -- its instant is not after p_at
    v_high := 24 * 60; -- its instant is (no zone went back a day)
    while v_high - v_low > 1 loop
      v_middle := (v_low + v_high) / 2;
      if geneva._cron_instant(v_wall + make_interval(mins => v_middle), p_timezone) <= p_at then
        v_low := v_middle;
      else
        v_high := v_middle;
      end if;
    end loop;
    v_wall := v_wall + make_interval(mins => v_low);
  end if;

  -- guard: the last matching wall-clock minute at or before v_wall
  v_day := v_wall::date;
  v_to := extract(hour from v_wall)::integer * 60 + extract(minute from v_wall)::integer;
  v_first := v_day - 3653;
  while v_day >= v_first loop
    if not extract(month from v_day)::integer = any(v_cron.months) then
      v_day := date_trunc('month', v_day)::date - 1;
      v_to := 24 * 60 - 1;
      continue;
    end if;
    v_dom_matches := extract(day from v_day)::integer = any(v_cron.days);
    v_dow_matches := extract(dow from v_day)::integer = any(v_cron.weekdays);
    if v_cron.days_star or v_cron.weekdays_star then
      v_day_matches := v_dom_matches and v_dow_matches;
    else
      v_day_matches := v_dom_matches or v_dow_matches;
    end if;
    if v_day_matches then
      v_time := null;
      <<hours>>
      for v_h in reverse cardinality(v_cron.hours) .. 1 loop
        v_hour := v_cron.hours[v_h];
        continue when v_hour * 60 > v_to;
        for v_m in reverse cardinality(v_cron.minutes) .. 1 loop
          v_minute := v_cron.minutes[v_m];
          if v_hour * 60 + v_minute <= v_to then
            v_time := v_hour * 60 + v_minute;
            exit hours;
          end if;
        end loop;
      end loop;
      if v_time is not null then
        return geneva._cron_instant(v_day + make_interval(mins => v_time), p_timezone);
      end if;
    end if;
    v_day := v_day - 1;
    v_to := 24 * 60 - 1;
  end loop;
  return null;
end;
$$;
