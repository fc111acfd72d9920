-- geneva._trg_schedules_guard: schedules are written only by their
-- functions (geneva.create_schedule, pause_schedule, resume_schedule,
-- delete_schedule, fire_schedules), which set geneva.scheduling to 'on'
-- (transaction-local) for their writes; refused for every role, the owner
-- included, otherwise (the others have no privilege on the table at all):
-- a hand-written next_fire_at could fire a slot twice or never. The rule is
-- the trigger's WHEN clause: the function runs only to refuse.
-- Fired by: the trigger schedules_guard, before insert, update or delete on
-- geneva.schedules, for each row, unless geneva.scheduling is 'on'.
-- Raises: 55000, naming the schedule.
create or replace function geneva._trg_schedules_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'schedule % cannot be % by hand',
    quote_literal(case when tg_op = 'INSERT' then new.name else old.name end),
    case tg_op when 'INSERT' then 'inserted' when 'UPDATE' then 'updated' else 'deleted' end
    using errcode = '55000',
          hint = 'Use geneva.create_schedule, pause_schedule, resume_schedule and delete_schedule.',
          table = 'schedules';
end;
$$;

create or replace trigger schedules_guard
before insert or update or delete on geneva.schedules
for each row
when (pg_catalog.current_setting('geneva.scheduling', true) is distinct from 'on')
execute function geneva._trg_schedules_guard();
