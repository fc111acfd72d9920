-- geneva._check_wait: refuses a wait that is negative or longer than the
-- longest wait Geneva takes, 100 years (3,155,760,000 seconds: a year counts
-- 365.25 days, a month 30, as extract(epoch) counts them). Far-off times are
-- a mistake (seconds given as milliseconds, say), and a bound keeps every
-- scheduled time inside timestamptz's range.
--
-- Called by: geneva._parse_wait (waits of definitions), geneva._end_running_refuse
-- (a reattempt's or suspend's wait), geneva.fail_step (a handler's wait).
-- Takes no locks. NULL passes.
-- Raises: 22023, naming p_where and the wait, for a negative or too long one.
create or replace function geneva._check_wait(p_wait interval, p_where text)
returns interval
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_wait < interval '0' then
    raise exception '%wait % is negative', coalesce(p_where || ': ', ''), p_wait
      using errcode = '22023',
            hint = 'A wait is from 0 to 100 years.';
  end if;
  if extract(epoch from p_wait) > 3155760000 then
    raise exception '%wait % is too long: the longest is 100 years', coalesce(p_where || ': ', ''), p_wait
      using errcode = '22023',
            hint = 'A wait is from 0 to 100 years.';
  end if;
  return p_wait;
end;
$$;
