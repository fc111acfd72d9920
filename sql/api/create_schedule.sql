-- geneva.create_schedule: creates a schedule, or replaces the one of that
-- name: a workflow of p_workflow_type for the hero, created at every slot of
-- the cron expression p_cron in the IANA time zone p_timezone by
-- geneva.fire_schedules (which every worker calls). Returns its id.
--
-- p_catch_up says what fire_schedules does with slots that passed unfired
-- (workers down, the schedule paused): `latest` fires the newest of them
-- only, `all` every one, oldest first (at most 100 a call), `none` none (a
-- slot fires only within a minute of its time). p_allow_multiple is
-- create_workflow's: without it, a slot whose hero still has an ongoing
-- workflow of the type is recorded as skipped.
--
-- Replacing keeps the schedule's id, history and paused state, and its next
-- slot unless the expression or the zone changed (then the next slot is
-- counted from now); replacing with the same arguments writes nothing, so a
-- deployment may declare its schedules at every start.
--
-- Called by: operators (any SQL client, goclient, `geneva schedule create`).
-- Locks: the schedule's row (the insert, or the update on conflict). Records
-- the action (geneva._log_action) when it writes (not the same schedule
-- again).
-- Raises: 22004 for a NULL argument; 22001 for a name, workflow type or hero
-- type over 255 bytes, a hero id over 1024 or an expression over 1000;
-- 22023 for an empty name, hero type or hero id, a bad cron expression
-- (naming the field) or one that never fires, an unknown time zone or
-- catch-up; WF001 for an unknown workflow type.
create or replace function geneva.create_schedule(
  p_name text,
  p_cron text,
  p_workflow_type text,
  p_hero_type text,
  p_hero_id text,
  p_timezone text default 'UTC',
  p_catch_up text default 'latest',
  p_allow_multiple boolean default false
)
returns bigint
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_timezone text;
  v_next timestamptz;
  v_id bigint;
begin
  if p_name is null or p_cron is null or p_workflow_type is null or p_hero_type is null
    or p_hero_id is null or p_timezone is null or p_catch_up is null or p_allow_multiple is null then
    raise exception 'name, cron, workflow type, hero type, hero id, time zone, catch-up and allow_multiple must not be null'
      using errcode = '22004';
  end if;
  perform geneva._check_length(p_name, 255, 'schedule name');
  perform geneva._check_length(p_cron, 1000, 'cron expression');
  perform geneva._check_length(p_workflow_type, 255, 'workflow type');
  perform geneva._check_length(p_hero_type, 255, 'hero type');
  perform geneva._check_length(p_hero_id, 1024, 'hero id');
  if p_name = '' or p_hero_type = '' or p_hero_id = '' then
    raise exception 'schedule name, hero type and hero id must not be empty' using errcode = '22023';
  end if;
  if p_catch_up not in ('latest', 'all', 'none') then
    raise exception 'unknown catch-up %', quote_literal(p_catch_up)
      using errcode = '22023',
            hint = 'Catch-up is latest (the newest missed slot), all (every missed slot) or none.';
  end if;
  perform geneva._cron_parse(p_cron);
  v_timezone := geneva._check_timezone(p_timezone);
  if (geneva._definition(p_workflow_type)).workflow_type is null then
    raise exception 'unknown workflow type %', p_workflow_type
      using errcode = 'WF001',
            hint = 'Register the type with geneva.define_workflow (the Go worker does it at start-up).',
            table = 'workflow_definitions';
  end if;
  v_next := geneva._cron_next(p_cron, v_timezone, v_now);
  if v_next is null then
    raise exception 'cron expression % never fires', quote_literal(p_cron)
      using errcode = '22023',
            detail = 'No day within ten years matches its day of month, month and day of week.';
  end if;

  perform pg_catalog.set_config('geneva.scheduling', 'on', true);
  insert into geneva.schedules as s (
    name, cron, timezone, workflow_type, hero_type, hero_id, allow_multiple, catch_up,
    next_fire_at, created_at, updated_at, updated_by
  ) values (
    p_name, p_cron, v_timezone, p_workflow_type, p_hero_type, p_hero_id, p_allow_multiple, p_catch_up,
    v_next, v_now, v_now, session_user
  )
  on conflict on constraint schedules_name_unique do update
  set cron = excluded.cron,
    timezone = excluded.timezone,
    workflow_type = excluded.workflow_type,
    hero_type = excluded.hero_type,
    hero_id = excluded.hero_id,
    allow_multiple = excluded.allow_multiple,
    catch_up = excluded.catch_up,
    next_fire_at = case
      when (s.cron, s.timezone) = (excluded.cron, excluded.timezone) then s.next_fire_at
      else excluded.next_fire_at
    end,
    updated_at = excluded.updated_at,
    updated_by = excluded.updated_by
  where (s.cron, s.timezone, s.workflow_type, s.hero_type, s.hero_id, s.allow_multiple, s.catch_up)
    is distinct from (excluded.cron, excluded.timezone, excluded.workflow_type, excluded.hero_type,
      excluded.hero_id, excluded.allow_multiple, excluded.catch_up)
  returning s.id into v_id;
  perform pg_catalog.set_config('geneva.scheduling', '', true);

  if v_id is null then -- the same schedule again: nothing written
    select s.id into v_id from geneva.schedules s where s.name = p_name;
  else
    perform geneva._log_action(
      'create_schedule', null,
      jsonb_build_object(
        'name', p_name, 'cron', p_cron, 'workflow_type', p_workflow_type, 'hero_type', p_hero_type,
        'hero_id', p_hero_id, 'timezone', p_timezone, 'catch_up', p_catch_up, 'allow_multiple', p_allow_multiple
      ),
      jsonb_build_object('schedule_id', v_id)
    );
  end if;
  return v_id;
end;
$$;

comment on function geneva.create_schedule(text, text, text, text, text, text, text, boolean) is
'Creates a schedule (a workflow for a hero at every slot of a cron expression, in a time zone), or replaces the one of that name.';
