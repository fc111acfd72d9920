-- geneva.fire_schedules: fires every due slot of every active schedule, once:
-- for each, a workflow of the schedule's type for its hero
-- (geneva.create_workflow, in this transaction), or, when the hero still has
-- an ongoing workflow of the type and the schedule does not allow multiple,
-- a firing recorded as skipped with the reason. Returns how many workflows
-- it created.
--
-- Any number of callers may run it at once, and every worker does, every
-- second (no leader): the due schedules are an index read of schedules_due
-- (next_fire_at, active only), taken `for update skip locked`, so two
-- callers never fire the same schedule, and a caller never waits for
-- another; a slot is a unique key of geneva.schedule_firings. A slot fires
-- exactly once, in the transaction that creates its workflow.
--
-- Slots that passed unfired (workers down, the schedule paused) are fired as
-- the schedule's catch-up says: `latest`, the newest of them; `all`, each,
-- oldest first, at most 100 a schedule a call (the next call goes on);
-- `none`, the newest only when it is at most a minute old. `latest` and
-- `none` find the newest directly (geneva._cron_previous), and `all` walks
-- only the slots it fires, so a schedule costs the same however long it
-- was not fired. At most 1000 schedules a call; the rest are due for the
-- next.
--
-- A schedule keeps its newest 1000 firings; older ones are deleted as it
-- fires.
--
-- Called by: workers (worker.Worker, every second by default), operators.
-- Locks: each due schedule's row (skip locked), then what create_workflow
-- locks.
-- Raises: what geneva.create_workflow raises but for the hero's ongoing
-- workflow (a rival transaction creating the hero's workflow at the same
-- moment is 23505: the call is rolled back and the next one skips the slot).
create or replace function geneva.fire_schedules()
returns integer
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_schedule geneva.schedules;
  v_slots timestamptz[];
  v_slot timestamptz;
  v_next timestamptz;
  v_ongoing geneva.workflows;
  v_workflow_id bigint;
  v_reason text;
  v_created integer := 0;
  v_fired bigint;
  v_skipped bigint;
  v_last_workflow_id bigint;
  v_last_skipped_slot timestamptz;
  v_last_skip_reason text;
begin
  for v_schedule in
    select s.*
    from geneva.schedules s
    where s.paused_at is null and s.next_fire_at <= v_now
    order by s.next_fire_at, s.id
    limit 1000
    for update skip locked
  loop
    -- guard: the slots to fire, and the next one
    if v_schedule.catch_up = 'all' then
      v_slots := '{}';
      v_slot := v_schedule.next_fire_at;
      while v_slot <= v_now and cardinality(v_slots) < 100 loop
        v_slots := v_slots || v_slot;
        v_slot := geneva._cron_next(v_schedule.cron, v_schedule.timezone, v_slot);
      end loop;
      v_next := v_slot;
    else
      v_slot := geneva._cron_previous(v_schedule.cron, v_schedule.timezone, v_now);
      v_slots := case
        when v_slot is null or v_slot < v_schedule.next_fire_at then '{}'
        when v_schedule.catch_up = 'none' and v_slot < v_now - interval '1 minute' then '{}'
        else array[v_slot]
      end;
      v_next := geneva._cron_next(v_schedule.cron, v_schedule.timezone, v_now);
    end if;

    v_fired := 0;
    v_skipped := 0;
    v_last_workflow_id := v_schedule.last_workflow_id;
    v_last_skipped_slot := v_schedule.last_skipped_slot;
    v_last_skip_reason := v_schedule.last_skip_reason;
    foreach v_slot in array v_slots loop
      continue when exists (
        select from geneva.schedule_firings f where f.schedule_id = v_schedule.id and f.slot = v_slot
      );
      -- guard: the hero's ongoing workflow of the type
      v_ongoing := null;
      if not v_schedule.allow_multiple then
        select w.* into v_ongoing
        from geneva.workflows w
        where w.workflow_type = v_schedule.workflow_type
          and w.hero_type = v_schedule.hero_type
          and w.hero_id = v_schedule.hero_id
          and w.state not in ('finished', 'canceled')
          and not w.allow_multiple;
      end if;
      if v_ongoing.id is null then
        v_workflow_id := geneva.create_workflow(
          v_schedule.workflow_type, v_schedule.hero_type, v_schedule.hero_id, v_schedule.allow_multiple
        );
        v_reason := null;
        v_created := v_created + 1;
        v_fired := v_fired + 1;
        v_last_workflow_id := v_workflow_id;
      else
        v_workflow_id := null;
        v_reason := format('hero %s %s has an ongoing %s workflow (%s, %s)',
          v_schedule.hero_type, v_schedule.hero_id, v_schedule.workflow_type, v_ongoing.id, v_ongoing.state);
        v_skipped := v_skipped + 1;
        v_last_skipped_slot := v_slot;
        v_last_skip_reason := v_reason;
      end if;
      perform pg_catalog.set_config('geneva.scheduling', 'on', true);
      insert into geneva.schedule_firings (schedule_id, slot, fired_at, workflow_id, skipped_reason)
      values (v_schedule.id, v_slot, v_now, v_workflow_id, v_reason);
      perform pg_catalog.set_config('geneva.scheduling', '', true);
    end loop;

    perform pg_catalog.set_config('geneva.scheduling', 'on', true);
    update geneva.schedules s
    set next_fire_at = coalesce(v_next, 'infinity'),
      last_slot = coalesce(v_slots[cardinality(v_slots)], s.last_slot),
      last_fired_at = case when cardinality(v_slots) > 0 then v_now else s.last_fired_at end,
      last_workflow_id = v_last_workflow_id,
      last_skipped_slot = v_last_skipped_slot,
      last_skip_reason = v_last_skip_reason,
      fired_count = s.fired_count + v_fired,
      skipped_count = s.skipped_count + v_skipped
    where s.id = v_schedule.id;
    if cardinality(v_slots) > 0 then
      -- guard: the newest 1000 firings are kept
      delete from geneva.schedule_firings f
      where f.schedule_id = v_schedule.id
        and f.slot < (
          select f2.slot from geneva.schedule_firings f2
          where f2.schedule_id = v_schedule.id
          order by f2.slot desc
          offset 999 limit 1
        );
    end if;
    perform pg_catalog.set_config('geneva.scheduling', '', true);
  end loop;
  return v_created;
end;
$$;

comment on function geneva.fire_schedules() is
'Fires every due slot of every active schedule exactly once (workers call it every second); returns the workflows created.';
