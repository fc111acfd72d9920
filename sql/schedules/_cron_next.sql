-- geneva._cron_next: a schedule's first slot strictly after p_after: the
-- first wall-clock minute after p_after's, in p_timezone, that the cron
-- expression matches and whose instant (geneva._cron_instant, the DST rule)
-- is after p_after. NULL when there is none within ten years (`0 0 30 2 *`).
--
-- Walks days, skipping months that do not match, so the cost is a loop over
-- the days until the next matching one (a yearly slot: up to a year of days,
-- about a millisecond); firing never calls it on a schedule not due.
--
-- Called by: geneva.create_schedule, geneva.fire_schedules,
-- geneva.resume_schedule; tests (the oracle of tests/cron_test.go). Takes
-- no locks.
-- Raises: 22023 for a bad expression (geneva._cron_parse).
create or replace function geneva._cron_next(p_cron text, p_timezone text, p_after timestamptz)
returns timestamptz
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_cron record;
  v_wall timestamp := date_trunc('minute', p_after at time zone p_timezone);
  v_day date;
  v_from integer;
  v_time integer;
  v_last date;
  v_next timestamp;
  v_at timestamptz;
  v_hour integer;
  v_minute integer;
  v_day_matches boolean;
  v_dom_matches boolean;
  v_dow_matches boolean;
begin
  if p_cron is null or p_timezone is null or p_after is null then
    return null;
  end if;
  select * into v_cron from geneva._cron_parse(p_cron);
  v_last := v_wall::date + 3653;
  loop
    -- guard: the next matching wall-clock minute after v_wall
    v_day := v_wall::date;
    v_from := extract(hour from v_wall)::integer * 60 + extract(minute from v_wall)::integer + 1;
    v_next := null;
    while v_day <= v_last loop
      if not extract(month from v_day)::integer = any(v_cron.months) then
        v_day := (date_trunc('month', v_day) + interval '1 month')::date;
        v_from := 0;
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
        foreach v_hour in array v_cron.hours loop
          continue when v_hour * 60 + 59 < v_from;
          foreach v_minute in array v_cron.minutes loop
            if v_hour * 60 + v_minute >= v_from then
              v_time := v_hour * 60 + v_minute;
              exit hours;
            end if;
          end loop;
        end loop;
        if v_time is not null then
          v_next := v_day + make_interval(mins => v_time);
          exit;
        end if;
      end if;
      v_day := v_day + 1;
      v_from := 0;
    end loop;
    if v_next is null then
      return null;
    end if;
    -- guard: its instant, which a repeated hour may put before p_after
    v_at := geneva._cron_instant(v_next, p_timezone);
    if v_at > p_after then
      return v_at;
    end if;
    v_wall := v_next;
  end loop;
end;
$$;
