-- geneva.pause_schedule: an operator pauses a schedule: it fires nothing
-- until resumed (geneva.resume_schedule, whose catch-up then decides about
-- the slots it missed). Pausing a paused schedule changes nothing.
--
-- Called by: operators (any SQL client, goclient, the CLI, the dashboard).
-- Locks: the schedule's row. Records the action (geneva._log_action) when it
-- changes the schedule.
-- Returns the schedule row after the call.
-- Raises: 22004 for a NULL name; P0002 for an unknown schedule.
create or replace function geneva.pause_schedule(p_name text)
returns geneva.schedules
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_schedule geneva.schedules := geneva._lock_schedule(p_name);
  v_now timestamptz := geneva.now();
begin
  if v_schedule.paused_at is not null then
    return v_schedule;
  end if;
  perform pg_catalog.set_config('geneva.scheduling', 'on', true);
  update geneva.schedules s
  set paused_at = v_now, updated_at = v_now, updated_by = session_user
  where s.id = v_schedule.id
  returning s.* into v_schedule;
  perform pg_catalog.set_config('geneva.scheduling', '', true);
  perform geneva._log_action('pause_schedule', null, jsonb_build_object('name', p_name), null);
  return v_schedule;
end;
$$;

comment on function geneva.pause_schedule(text) is
'Pauses a schedule: it fires nothing until resumed.';
