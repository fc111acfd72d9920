-- geneva.delete_schedule: an operator deletes a schedule and its firings'
-- history. The workflows it created stay.
--
-- Called by: operators (any SQL client, goclient, the CLI).
-- Locks: the schedule's row, then its firings (the cascade). Records the
-- action (geneva._log_action).
-- Returns the deleted schedule row.
-- Raises: 22004 for a NULL name; P0002 for an unknown schedule.
create or replace function geneva.delete_schedule(p_name text)
returns geneva.schedules
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_schedule geneva.schedules := geneva._lock_schedule(p_name);
begin
  perform pg_catalog.set_config('geneva.scheduling', 'on', true);
  delete from geneva.schedules s where s.id = v_schedule.id;
  perform pg_catalog.set_config('geneva.scheduling', '', true);
  perform geneva._log_action(
    'delete_schedule', null, jsonb_build_object('name', p_name), jsonb_build_object('schedule_id', v_schedule.id)
  );
  return v_schedule;
end;
$$;

comment on function geneva.delete_schedule(text) is
'Deletes a schedule and its firings'' history; the workflows it created stay.';
