-- geneva._check_timezone: an IANA time zone name as PostgreSQL spells it
-- (`america/new_york` is America/New_York), or 22023. Abbreviations (PST)
-- and POSIX rules (UTC+3, <+03>-3), which PostgreSQL would take too, are
-- refused: they have no DST rules or mean the opposite offset.
--
-- The TimeZone setting checks the name; it is set in a block that is then
-- rolled back, so the session's time zone is never changed. A name whose
-- first part has a digit or a sign (EST5EDT, UTC+3) must also be one of
-- pg_timezone_names, which is slow (a quarter of a second) and so is read
-- only then.
--
-- Called by: geneva.create_schedule. Takes no locks.
-- Raises: 22023 for an unknown zone.
create or replace function geneva._check_timezone(p_timezone text)
returns text
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_name text;
begin
  begin
    v_name := pg_catalog.set_config('TimeZone', p_timezone, true);
    raise exception using errcode = 'P0001', message = v_name;
  exception
    when invalid_parameter_value then
      v_name := null;
    when raise_exception then
      v_name := sqlerrm;
  end;
  if v_name is null or p_timezone !~ '^[A-Za-z]' or p_timezone ~ '[<>:,]'
    or (split_part(v_name, '/', 1) !~ '^[A-Za-z_]+$'
      and not exists (select from pg_catalog.pg_timezone_names z where z.name = v_name)) then
    raise exception 'unknown time zone %', quote_literal(p_timezone)
      using errcode = '22023',
            hint = 'Name an IANA time zone, e.g. UTC, Europe/Berlin or America/New_York (select name from pg_timezone_names).';
  end if;
  return v_name;
end;
$$;
