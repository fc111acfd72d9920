-- geneva._housekeeping_settings: the one row of geneva.housekeeping_settings
-- (migrations/001_create_schema.sql), the thresholds housekeeping uses when
-- not given others.
--
-- Called by: geneva.housekeep, geneva.housekeep_if_due (the round interval),
-- geneva.get_housekeeping_settings, geneva.set_housekeeping_settings.
-- The row is always there: no function deletes it and the guard
-- (sql/guards/housekeeping_settings_guard.sql) refuses deleting it by hand,
-- but truncate does not ask; a missing row is put back with the table's
-- defaults, as housekeep_if_due puts back geneva.housekeeping_rounds'.
-- Takes no locks.
create or replace function geneva._housekeeping_settings()
returns geneva.housekeeping_settings
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_settings geneva.housekeeping_settings;
begin
  select s.* into v_settings from geneva.housekeeping_settings s where s.singleton;
  if not found then
    perform pg_catalog.set_config('geneva.housekeeping_settings', 'on', true);
    insert into geneva.housekeeping_settings default values on conflict do nothing;
    perform pg_catalog.set_config('geneva.housekeeping_settings', '', true);
    select s.* into strict v_settings from geneva.housekeeping_settings s where s.singleton;
  end if;
  return v_settings;
end;
$$;
