-- geneva._cron_parse: a cron expression as the values of its five fields
-- (minute 0-59, hour 0-23, day of month 1-31, month 1-12, day of week 0-6
-- with 0 Sunday), or one of @yearly (@annually), @monthly, @weekly, @daily
-- (@midnight) and @hourly, which stand for 0 0 1 1 *, 0 0 1 * *, 0 0 * * 0,
-- 0 0 * * * and 0 * * * *. Fields are separated by blanks; see
-- geneva._cron_field for one field's syntax.
--
-- The two day fields combine as in Vixie cron (and robfig/cron): when either
-- is a star (days_star, weekdays_star), a day must match both; when both are
-- restricted, either (`0 0 1 * mon`: the first of the month and every
-- Monday).
--
-- Called by: geneva._cron_next, geneva._cron_previous, geneva.create_schedule.
-- Takes no locks.
-- Raises: 22004 for a NULL expression; 22023 for a bad one, naming the field.
create or replace function geneva._cron_parse(
  p_cron text,
  out minutes integer[],
  out hours integer[],
  out days integer[],
  out months integer[],
  out weekdays integer[],
  out days_star boolean,
  out weekdays_star boolean
)
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_cron text := btrim(p_cron, E' \t\n\r');
  v_fields text[];
begin
  if p_cron is null then
    raise exception 'cron expression must not be null' using errcode = '22004';
  end if;
  if left(v_cron, 1) = '@' then
    v_cron := case lower(v_cron)
      when '@yearly' then '0 0 1 1 *'
      when '@annually' then '0 0 1 1 *'
      when '@monthly' then '0 0 1 * *'
      when '@weekly' then '0 0 * * 0'
      when '@daily' then '0 0 * * *'
      when '@midnight' then '0 0 * * *'
      when '@hourly' then '0 * * * *'
    end;
    if v_cron is null then
      raise exception 'cron expression %: unknown descriptor', quote_literal(p_cron)
        using errcode = '22023',
              hint = 'Descriptors are @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly.';
    end if;
  end if;
  v_fields := regexp_split_to_array(v_cron, E'[ \t\n\r]+');
  if v_cron = '' or array_length(v_fields, 1) <> 5 then
    raise exception 'cron expression % has % fields, not five', quote_literal(p_cron),
      case when v_cron = '' then 0 else array_length(v_fields, 1) end
      using errcode = '22023',
            hint = 'Five fields: minute, hour, day of month, month, day of week (e.g. */15 9-17 * * mon-fri), or @hourly, @daily, @weekly, @monthly, @yearly.';
  end if;
  select f.matched into minutes from geneva._cron_field(v_fields[1], 'minute', 0, 59, 59, null) f;
  select f.matched into hours from geneva._cron_field(v_fields[2], 'hour', 0, 23, 23, null) f;
  select f.matched, f.star into days, days_star from geneva._cron_field(v_fields[3], 'day of month', 1, 31, 31, null) f;
  select f.matched into months from geneva._cron_field(
    v_fields[4], 'month', 1, 12, 12,
    '{jan,feb,mar,apr,may,jun,jul,aug,sep,oct,nov,dec}'
  ) f;
  select f.matched, f.star into weekdays, weekdays_star from geneva._cron_field(
    v_fields[5], 'day of week', 0, 7, 6, '{sun,mon,tue,wed,thu,fri,sat}'
  ) f;
  -- 7 is Sunday too
  weekdays := array(select distinct d % 7 from unnest(weekdays) d order by 1);
end;
$$;
