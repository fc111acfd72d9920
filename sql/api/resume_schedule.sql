-- geneva.resume_schedule: an operator resumes a paused schedule. The slots
-- that passed while it was paused are missed slots, and its catch-up
-- decides, which is where its next slot goes: `latest`, the newest missed
-- slot (geneva._cron_previous), which fires at once; `all`, the first it
-- did not fire, as before the pause (every missed one fires, oldest first,
-- 100 a call); `none`, the first slot after now, or one at most a minute
-- old, which still fires (as geneva.fire_schedules'). A schedule that missed
-- nothing keeps its next slot. Resuming an active schedule changes nothing.
--
-- Called by: operators (any SQL client, goclient, the CLI, the dashboard).
-- Locks: the schedule's row. Records the action (geneva._log_action) when it
-- changes the schedule.
-- Returns the schedule row after the call.
-- Raises: 22004 for a NULL name; P0002 for an unknown schedule.
create or replace function geneva.resume_schedule(p_name text)
returns geneva.schedules
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_schedule geneva.schedules := geneva._lock_schedule(p_name);
  v_now timestamptz := geneva.now();
  v_next timestamptz;
begin
  if v_schedule.paused_at is null then
    return v_schedule;
  end if;
  -- guard: the next slot, counted from now but for `all`
  v_next := v_schedule.next_fire_at;
  if v_schedule.catch_up = 'latest' then
    v_next := greatest(v_next, geneva._cron_previous(v_schedule.cron, v_schedule.timezone, v_now));
  elsif v_schedule.catch_up = 'none' then
    v_next := greatest(v_next, geneva._cron_next(
      v_schedule.cron, v_schedule.timezone, v_now - interval '1 minute' - interval '1 microsecond'
    ));
  end if;
  perform pg_catalog.set_config('geneva.scheduling', 'on', true);
  update geneva.schedules s
  set paused_at = null, next_fire_at = v_next, updated_at = v_now, updated_by = session_user
  where s.id = v_schedule.id
  returning s.* into v_schedule;
  perform pg_catalog.set_config('geneva.scheduling', '', true);
  perform geneva._log_action('resume_schedule', null, jsonb_build_object('name', p_name), null);
  return v_schedule;
end;
$$;

comment on function geneva.resume_schedule(text) is
'Resumes a paused schedule; its catch-up decides about the slots it missed.';
