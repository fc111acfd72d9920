-- geneva._trg_schedule_firings_guard: a firing is history: inserted only by
-- geneva.fire_schedules, deleted only by it (a schedule keeps its newest
-- 1000) and with its schedule (geneva.delete_schedule), which set
-- geneva.scheduling to 'on' (transaction-local); never updated. Refused for
-- every role, the owner included (the others have no privilege on the table
-- at all): a forged firing would keep its slot from ever firing.
-- Fired by: the trigger schedule_firings_guard, before insert, update or
-- delete on geneva.schedule_firings, for each row.
-- Raises: 55000, naming the firing.
create or replace function geneva._trg_schedule_firings_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if tg_op <> 'UPDATE' and pg_catalog.current_setting('geneva.scheduling', true) = 'on' then
    return case when tg_op = 'INSERT' then new else old end;
  end if;
  raise exception 'schedule firing % cannot be % by hand',
    case when tg_op = 'INSERT' then coalesce(new.id::text, new.slot::text) else old.id::text end,
    case tg_op when 'INSERT' then 'inserted' when 'UPDATE' then 'updated' else 'deleted' end
    using errcode = '55000',
          hint = 'Slots are fired by geneva.fire_schedules; a firing goes with its schedule (geneva.delete_schedule).',
          table = 'schedule_firings';
end;
$$;

create or replace trigger schedule_firings_guard
before insert or update or delete on geneva.schedule_firings
for each row
execute function geneva._trg_schedule_firings_guard();
