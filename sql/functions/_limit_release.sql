-- geneva._limit_release: slots of limit keys were freed (an execution that
-- held them ended or gave them back: with p_freed, each element of p_keys is
-- one slot freed, taken off geneva.limit_slots), or may have (a limit grew, a
-- backstop: p_freed false, nothing taken off): each key's oldest
-- waiting executions, as many as it has free slots, are passed one and made
-- due now, their River jobs inserted. A woken execution holds its slot while
-- scheduled (no one else can take it), and its claim checks only its other
-- limits. An execution whose workflow is not ready (paused) keeps waiting:
-- its resume claims it again.
--
-- Called by: geneva._end_execution and geneva._end_running (an execution
-- holding slots ended), geneva._limit_admit (an execution gave back a slot
-- it could not use), geneva.pause_workflow (a paused workflow's kept
-- execution gives back its slot), geneva.define_limit (a limit may have
-- grown), geneva.housekeep (every key with waiters: a backstop).
-- Locks: the keys (geneva._limit_lock), after the caller's workflow and
-- execution locks, then each woken execution's row (whose workflow's lock it
-- does not take: a waiting execution has no job, so no claim takes it, and
-- no other function that locks it takes a key's lock first).
create or replace function geneva._limit_release(p_keys text[], p_freed boolean default true)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
as $$
declare
  v_limiting text := pg_catalog.current_setting('geneva.limiting', true);
  v_now timestamptz := geneva.now();
  v_key text;
  v_count integer;
  v_free integer;
  v_waiter record;
  v_execution geneva.step_executions;
begin
  if p_keys is null or cardinality(p_keys) = 0 then
    return;
  end if;
  -- the only writers of the limits' tables (sql/triggers/limits_guard.sql)
  perform pg_catalog.set_config('geneva.limiting', 'on', true);
  perform geneva._limit_lock(p_keys);
  for v_key, v_count in
    select u.key, count(*)
    from unnest(p_keys) as u (key)
    where u.key is not null
    group by u.key
    order by u.key
  loop
    if p_freed then
      update geneva.limit_slots ls
      set held = greatest(ls.held - v_count, 0)
      where ls.limit_key = v_key;
    end if;
    v_free := coalesce(geneva._limit_capacity(v_key), 2147483647)
      - coalesce((select ls.held from geneva.limit_slots ls where ls.limit_key = v_key), 0);
    continue when v_free <= 0;
    for v_waiter in
      select e.id, w
      from geneva.step_executions e
      join geneva.workflows w on w.id = e.workflow_id
      where e.state = 'scheduled'
        and e.limit_wait_key = v_key
        and w.state = 'ready'
      order by e.id
      limit v_free
      for no key update of e skip locked
    loop
      update geneva.step_executions e
      set limit_wait_key = null,
        limit_keys = array[v_key],
        scheduled_for = least(e.scheduled_for, v_now),
        updated_at = v_now
      where e.id = v_waiter.id
      returning e.* into v_execution;
      insert into geneva.limit_slots as ls (limit_key, held) values (v_key, 1)
      on conflict (limit_key) do update set held = ls.held + 1;
      perform geneva._ensure_job(v_waiter.w, v_execution);
    end loop;
  end loop;
  perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
end;
$$;
