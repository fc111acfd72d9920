-- geneva._cron_instant: the instant a schedule's slot, a wall-clock time in
-- its time zone, fires at. This is Geneva's DST rule:
--
--   - a wall-clock time that happens twice (the repeated hour when clocks go
--     back) is its first occurrence: the repeated hour fires once;
--   - one that does not happen (the hour skipped when clocks go forward) is
--     the first valid time after it, the instant of the change: every slot of
--     the skipped hour becomes that one instant, so they fire once, together.
--
-- (PostgreSQL's own `timestamp at time zone` reads an ambiguous time as the
-- later, standard one, and a skipped time with the offset before the change,
-- neither of which is the rule.) The offsets in force a day before and a day
-- after the wall-clock time are the candidates; a skipped time walks forward
-- a minute at a time to the first that exists.
--
-- Called by: geneva._cron_next, geneva._cron_previous. Takes no locks.
create or replace function geneva._cron_instant(p_wall timestamp, p_timezone text)
returns timestamptz
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_wall timestamp := p_wall;
  v_utc timestamptz;
  v_before timestamptz;
  v_after timestamptz;
  v_before_exists boolean;
  v_after_exists boolean;
begin
  for v_minute in 0 .. 24 * 60 loop
    v_utc := v_wall at time zone 'UTC';
    v_before := v_utc - (((v_utc - interval '1 day') at time zone p_timezone) - ((v_utc - interval '1 day') at time zone 'UTC'));
    v_after := v_utc - (((v_utc + interval '1 day') at time zone p_timezone) - ((v_utc + interval '1 day') at time zone 'UTC'));
    v_before_exists := (v_before at time zone p_timezone) = v_wall;
    v_after_exists := (v_after at time zone p_timezone) = v_wall;
    if v_before_exists and v_after_exists then
      return least(v_before, v_after);
    elsif v_before_exists then
      return v_before;
    elsif v_after_exists then
      return v_after;
    elsif ((v_wall at time zone p_timezone) at time zone p_timezone) = v_wall then
      return v_wall at time zone p_timezone; -- offsets that changed twice within a day
    end if;
    v_wall := v_wall + interval '1 minute';
  end loop;
  return p_wall at time zone p_timezone; -- not reached: no zone skips a day of minutes
end;
$$;
