-- geneva._trg_housekeeping_settings_guard: the housekeeping settings
-- (geneva.housekeeping_settings) are written only by
-- geneva.set_housekeeping_settings, which validates them and records who set
-- them, and by geneva._housekeeping_settings, which puts back a missing row;
-- refused for every role, the owner included, otherwise (the others have no
-- privilege on the table at all). No function deletes the row.
--
-- Those functions set geneva.housekeeping_settings to 'on'
-- (transaction-local) for their write only. The owner could set it too: the
-- guard is against mistakes, not against the owner, who can always disable
-- triggers. The rule is the trigger's WHEN clause: the function runs only to
-- refuse.
-- Fired by: the trigger housekeeping_settings_guard, before insert,
-- update or delete on geneva.housekeeping_settings, for each row, unless
-- geneva.housekeeping_settings is 'on'.
-- Raises: 55000.
create or replace function geneva._trg_housekeeping_settings_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'the housekeeping settings cannot be changed by hand (%)', lower(tg_op)
    using errcode = '55000',
          hint = 'Set them with geneva.set_housekeeping_settings (geneva housekeep settings).',
          table = tg_table_name;
end;
$$;

create or replace trigger housekeeping_settings_guard
before insert or update or delete on geneva.housekeeping_settings
for each row
when (pg_catalog.current_setting('geneva.housekeeping_settings', true) is distinct from 'on')
execute function geneva._trg_housekeeping_settings_guard();
