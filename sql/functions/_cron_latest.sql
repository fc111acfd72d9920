-- geneva._cron_latest: a schedule's latest slot from p_from to p_to (both
-- included), NULL when none; what catch-up `latest` and `none` fire.
--
-- Looks back over growing windows (a minute, ten, an hour, …) from p_to,
-- never before p_from, so that a schedule down for a week costs a few calls
-- of geneva._cron_next, not one per missed slot.
--
-- Called by: geneva.fire_schedules. Takes no locks.
-- Raises: 22023 for a bad expression (geneva._cron_parse).
create or replace function geneva._cron_latest(
  p_cron text,
  p_timezone text,
  p_from timestamptz,
  p_to timestamptz
)
returns timestamptz
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_window interval;
  v_start timestamptz;
  v_slot timestamptz;
  v_next timestamptz;
begin
  if p_from > p_to then
    return null;
  end if;
  foreach v_window in array array[
    interval '1 minute', interval '10 minutes', interval '1 hour', interval '6 hours', interval '1 day',
    interval '7 days', interval '32 days', interval '1 year', interval '11 years'
  ] loop
    v_start := greatest(p_to - v_window, p_from - interval '1 microsecond');
    v_slot := geneva._cron_next(p_cron, p_timezone, v_start);
    if v_slot <= p_to then
      loop
        v_next := geneva._cron_next(p_cron, p_timezone, v_slot);
        exit when v_next is null or v_next > p_to;
        v_slot := v_next;
      end loop;
      return v_slot;
    end if;
    exit when v_start < p_from;
  end loop;
  return null;
end;
$$;
