-- geneva._lock_schedule: the schedule of that name, locked for update.
--
-- Called by: geneva.pause_schedule, geneva.resume_schedule,
-- geneva.delete_schedule.
-- Locks: the schedule's row.
-- Raises: 22004 for a NULL name; P0002 for an unknown schedule.
create or replace function geneva._lock_schedule(p_name text)
returns geneva.schedules
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_schedule geneva.schedules;
begin
  if p_name is null then
    raise exception 'schedule name must not be null' using errcode = '22004';
  end if;
  select s.* into v_schedule from geneva.schedules s where s.name = p_name for update;
  if not found then
    raise exception 'schedule % not found', quote_literal(p_name)
      using errcode = 'P0002',
            hint = 'See geneva.schedule_list for the schedules there are.',
            table = 'schedules';
  end if;
  return v_schedule;
end;
$$;
