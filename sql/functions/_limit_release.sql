-- geneva._limit_release: slots of limit keys were freed (with
-- p_workflow_ids: each element of p_keys is the slot the workflow of the same
-- position held, its row of geneva.limit_slots deleted), or may have (a
-- limit grew, a backstop: p_workflow_ids NULL, nothing deleted): each key's
-- oldest waiting executions, as many as slots were freed (or as it has free
-- now), are passed one and made due now, their River jobs inserted. A woken
-- execution holds its slot while scheduled (no one else can take it), and
-- its claim checks only its other limits. An execution whose workflow is not
-- ready (paused) keeps waiting: its resume claims it again.
--
-- A freed slot whose element of p_take_queues names a queue was freed by a
-- worker that offers to run the waiter next, in the job that ran the step
-- that freed it (geneva.complete_steps' p_take_waiters): a waiter it can
-- run is started here instead, without a River job, as a claim would start
-- it, and returned with the workflow that freed the slot (taken_by). A
-- waiter it can run: its step is in that queue (a slot of its type's
-- concurrency is freed by a step of the same type, so the worker defines
-- it), no worker's condition runs before it (geneva._unconditional), it is
-- held to that slot only (geneva._limit_carries), it awaits no event it has
-- not got, its hero was not deleted (hero_missing_at), it is a first attempt
-- (a repeat is claimed by start_steps, which tells its idempotency key) and
-- its workflow's lock is free (not waited for: the caller holds other
-- workflows' locks).
--
-- Called by: geneva._end_execution and geneva._end_running (an execution
-- holding slots ended), geneva._limit_admit (an execution gave back a slot
-- it could not use), geneva.pause_workflow (a paused workflow's kept
-- execution gives back its slot), geneva.define_limit (a limit may have
-- grown), geneva.housekeep (every key with waiters: a backstop).
-- Locks: freeing takes no key's advisory lock: it locks the freed rows (in
-- key and workflow order, as geneva._limit_full does) and deletes them, which
-- never adds a slot, then wakes waiters with new statements (a row each, no
-- more than it deleted), so that it sees any left waiting by a claim that
-- counted its slots before they were freed (geneva._limit_full). The
-- backstop, which may add slots, takes the keys' locks (geneva._limit_lock).
-- Then each woken execution's row, skipping those locked (whose workflow's
-- lock it does not take, but to start it, skipping it then too: a waiting
-- execution has no job, so no claim takes it, and no other function that
-- locks it waits for a slot's row or a key's lock first).
-- Returns a row per waiter started: the workflow that freed the slot it took
-- (taken_by) and the execution (started_id).
create or replace function geneva._limit_release(
  p_keys text[],
  p_workflow_ids bigint[] default null,
  p_take_queues text[] default null
)
returns table (taken_by bigint, started_id bigint)
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
as $$
declare
  v_limiting text := pg_catalog.current_setting('geneva.limiting', true);
  v_now timestamptz := geneva.now();
  v_key text;
  v_free integer;
  v_woken integer;
  v_last bigint;
  v_more boolean;
  v_waiter geneva.step_executions;
  v_workflow geneva.workflows;
  v_bound integer;
  v_capacity integer;
  v_freed_keys text[];
  v_freed_bounds integer[];
  v_job_id bigint;
  v_takers bigint[];
  v_taker_queues text[];
  v_taker integer;
  v_definition geneva.workflow_definitions;
begin
  if p_keys is null or cardinality(p_keys) = 0 then
    return;
  end if;
  -- the only writers of the limits' tables (sql/triggers/limits_guard.sql)
  perform pg_catalog.set_config('geneva.limiting', 'on', true);
  if p_workflow_ids is not null then
    perform
    from geneva.limit_slots ls
    join unnest(p_keys, p_workflow_ids) as u (key, workflow_id)
      on ls.limit_key = u.key and ls.workflow_id = u.workflow_id
    order by ls.limit_key, ls.workflow_id
    for update of ls;
    with freed as (
      delete from geneva.limit_slots ls
      using unnest(p_keys, p_workflow_ids) as u (key, workflow_id)
      where ls.limit_key = u.key and ls.workflow_id = u.workflow_id
      returning ls.limit_key, ls.bound
    )
    select array_agg(f.limit_key), array_agg(f.bound)
    into v_freed_keys, v_freed_bounds
    from freed f;
  else
    perform geneva._limit_lock(p_keys);
  end if;
  for v_key in
    select distinct u.key
    from unnest(p_keys) as u (key)
    where u.key is not null
    order by u.key
  loop
    v_capacity := coalesce(geneva._limit_capacity(v_key), 2147483647);
    if p_workflow_ids is null then
      v_bound := v_capacity;
      v_free := v_bound - (select count(*) from geneva.limit_slots ls where ls.limit_key = v_key);
    else
      -- as many as were deleted (none for a slot not held), each passed
      -- on with the bound of the one freed (see geneva.limit_slots); but a
      -- slot taken above a concurrency lowered since is passed on only
      -- while the key has room under the new one, so that a lowered
      -- concurrency applies while others wait too (a count without the
      -- key's lock, which a free cannot take after locking slots: at
      -- worst one more passes, once, after a lowering)
      select count(*), max(f.bound) into v_free, v_bound
      from unnest(v_freed_keys, v_freed_bounds) as f (key, bound)
      where f.key = v_key;
      if v_bound > v_capacity then
        v_free := least(v_free, v_capacity - (select count(*) from geneva.limit_slots ls where ls.limit_key = v_key));
        v_bound := v_capacity;
      end if;
    end if;
    continue when v_free <= 0;
    -- the workers offering to run one of this key's waiters next
    v_takers := null;
    v_taker_queues := null;
    if p_take_queues is not null then
      select array_agg(u.workflow_id order by u.workflow_id), array_agg(u.queue order by u.workflow_id)
      into v_takers, v_taker_queues
      from unnest(p_keys, p_workflow_ids, p_take_queues) as u (key, workflow_id, queue)
      where u.key = v_key and u.queue is not null;
    end if;
    -- the oldest waiters first, a few at a time: from the executions alone
    -- (the key as a range, not an equality: with `= v_key`, the order by
    -- id alone would let the planner walk the primary key, every execution
    -- ever recorded, filtering for the key; and joined with the workflows,
    -- a generic plan may read every ready workflow, or every waiter of the
    -- key, and sort them; as it is, the partial index
    -- step_executions_limit_waiting is the only one in this order), each
    -- one's workflow then read, a paused one's waiter skipped
    v_woken := 0;
    v_last := 0;
    loop
      v_more := false;
      for v_waiter in
        select e.*
        from geneva.step_executions e
        where e.state = 'scheduled'
          and e.limit_wait_key >= v_key and e.limit_wait_key <= v_key
          and e.id > v_last
        order by e.limit_wait_key, e.id
        limit v_free - v_woken
        for no key update of e skip locked
      loop
        v_more := true;
        v_last := v_waiter.id;
        select w.* into v_workflow from geneva.workflows w where w.id = v_waiter.workflow_id and w.state = 'ready';
        continue when not found;
        -- a worker that freed a slot of the key runs it next, if it can
        v_taker := null;
        if v_takers is not null then
          v_definition := geneva._definition(v_workflow.workflow_type);
          v_taker := array_position(
            v_taker_queues,
            geneva._step_queue(v_definition.step_names, v_definition.step_queues, v_definition.queue, v_waiter.step_name)
          );
          if v_taker is not null and v_workflow.hero_missing_at is null and v_waiter.attempt = 1
            and (v_waiter.await_event is null or v_waiter.event_id is not null)
            and geneva._unconditional(v_definition.definition, v_definition.step_names, v_waiter.step_name)
            and geneva._limit_carries(v_definition.definition, v_definition.step_names, v_waiter.step_name) then
            perform
            from geneva.workflows w
            where w.id = v_waiter.workflow_id and w.state = 'ready'
            for no key update of w skip locked;
            if not found then
              v_taker := null;
            end if;
          else
            v_taker := null;
          end if;
          if v_taker is not null then
            update geneva.step_executions e
            set state = 'in_progress',
              started_at = v_now,
              limit_wait_key = null,
              limit_keys = array[v_key],
              scheduled_for = least(e.scheduled_for, v_now),
              updated_at = v_now
            where e.id = v_waiter.id;
            update geneva.workflows w
            set state = 'performing',
              current_step_name = v_waiter.step_name,
              started_at = coalesce(w.started_at, v_now),
              updated_at = v_now
            where w.id = v_waiter.workflow_id;
            insert into geneva.limit_slots (limit_key, workflow_id, bound) values (v_key, v_workflow.id, v_bound);
            taken_by := v_takers[v_taker];
            started_id := v_waiter.id;
            return next;
            v_taker_queues[v_taker] := null;
            v_woken := v_woken + 1;
            continue;
          end if;
        end if;
        -- its River job, due now: a new one, inserted before the
        -- execution is updated so that it is written once (a waiter's job
        -- ran when its key was full), else the one it has, brought forward
        v_waiter.scheduled_for := least(v_waiter.scheduled_for, v_now);
        v_job_id := geneva._ensure_job(v_workflow, v_waiter, p_record => false);
        update geneva.step_executions e
        set limit_wait_key = null,
          limit_keys = array[v_key],
          scheduled_for = v_waiter.scheduled_for,
          job_id = coalesce(v_job_id, e.job_id),
          updated_at = v_now
        where e.id = v_waiter.id;
        insert into geneva.limit_slots (limit_key, workflow_id, bound) values (v_key, v_workflow.id, v_bound);
        v_woken := v_woken + 1;
      end loop;
      exit when not v_more or v_woken >= v_free;
    end loop;
  end loop;
  perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
end;
$$;
