-- geneva._limit_release: frees slots of limit keys, and wakes the waiters
-- they were for: the one waking rule. Each freed slot (p_keys and
-- p_workflow_ids, element by element: the slot the workflow held of the
-- key) goes to the key's oldest waiter whose workflow is ready (a paused
-- one's is passed over), its row updated in place to its new holder, when
-- its number is within the key's concurrency; a slot numbered above it (the
-- concurrency was lowered since) is deleted, and one no waiter takes is
-- free again. Then, when the key has waiters still, they take its free
-- slots while it has room (geneva._limit_take). With p_workflow_ids NULL
-- nothing is freed: the key's waiters take its free slots (a limit that may
-- have grown, housekeeping's backstop). A woken execution holds its slot
-- while scheduled (no one else can take it) and is made due now with its
-- River job; its claim checks only its other limits.
--
-- A freed slot whose element of p_take_queues names a queue was freed by a
-- worker that offers to run the waiter next, in the job that ran the step
-- that freed it (geneva.complete_steps' p_take_waiters): a waiter it can
-- run is woken without a job and returned with that workflow (taken_by), for
-- the caller to start it for that worker (geneva._end_running). A waiter it
-- can run: its step is in that queue (a slot
-- of its type's concurrency is freed by a step of the same type, so the
-- worker defines it), no worker's condition runs before it
-- (geneva._unconditional), it is held to that slot only
-- (geneva._limit_carries), it awaits no event it has not got, its hero was
-- not deleted (hero_missing_at), it is a first attempt (a repeat is claimed
-- by its own job, which tells its idempotency key), it is due and its
-- workflow's lock is free (not waited for: the caller holds other
-- workflows' locks). It is left as it was, waiting, but for its slot's row:
-- the caller starts it in that slot (limit_keys, from its limit_wait_key).
--
-- Called by: geneva._end_running (the slots of the steps it ended but those
-- carried on), geneva._end_execution (an execution holding slots ended),
-- geneva._limit_admit (an execution gave back a slot it could not use),
-- geneva.pause_workflow (a paused workflow's kept execution gives back its
-- slot), geneva.define_limit (a limit may have grown), geneva.housekeep
-- (every key with waiters: a backstop, which also wakes a step created
-- behind waiters that no free saw: see geneva._limit_wait_behind).
-- Locks: the freed slots' rows (FOR NO KEY UPDATE, in key and slot order),
-- then the keys' (geneva._limit_lock): FOR UPDATE when any of them has
-- waiters, or nothing is freed (it may give the keys' free slots); else FOR
-- KEY SHARE (frees never take turns). A slot's row first: whoever holds a
-- key's lock never waits for a slot's row (a claim's FOR UPDATE SKIP LOCKED
-- may lock a row taken since its snapshot began, and then wait for the
-- key's lock), and a caller that holds the key's lock already (a claim)
-- has locked the rows it frees before it. Then the waiters' executions, and the
-- workflows of those a worker takes, skipping those another transaction
-- holds (a waiting execution has no job, so no claim takes it, and no other
-- function that locks it waits for a key's lock first).
-- Plans: as geneva.start_steps (index lookups by key and id, planned once
-- per session, whatever the tables' size then), whoever calls it first,
-- and no bitmap scans (see geneva.limit_slots).
-- Returns a row per waiter woken for a worker that freed its slot: that
-- workflow (taken_by) and the execution (started_id).
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
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
set enable_bitmapscan = off
as $$
#variable_conflict use_column
declare
  v_limiting text := pg_catalog.current_setting('geneva.limiting', true);
  v_now timestamptz := geneva.now();
  -- (whether the keys have waiters, as this transaction sees them before
  -- their locks)
  v_waited boolean := false;
  v_freed integer;
  v_more boolean := p_workflow_ids is null;
  v_woken record;
  v_left record;
  v_taken bigint[];
  v_taken_by bigint[];
  v_item record;
  v_job_id bigint;
begin
  if p_keys is null or cardinality(p_keys) = 0 then
    return;
  end if;
  -- the only writers of the limits' tables (sql/guards/limits_guard.sql)
  perform pg_catalog.set_config('geneva.limiting', 'on', true);
  -- (a key's waiters are looked up by the key as a range, not an equality:
  -- with `= key`, an order by id would let the planner walk the primary
  -- key, every execution ever recorded, filtering for the key; the partial
  -- index step_executions_limit_waiting is the only one in this order. No
  -- state: a waiter is scheduled, and a state = 'scheduled' would let a plan
  -- cached while no one waited read every scheduled execution instead: see
  -- that index)
  if p_workflow_ids is not null then
    -- the freed slots' rows first, in key and slot order (see Locks above),
    -- and whether their keys have waiters
    select coalesce(bool_or(w.waited), false) into v_waited
    from (
      select s.limit_key
      from geneva.limit_slots s
      join unnest(p_keys, p_workflow_ids) as u (key, workflow_id)
        on s.limit_key = u.key and s.workflow_id = u.workflow_id
      order by s.limit_key, s.slot
      for no key update of s
    ) l
    cross join lateral (
      select exists (
        select from geneva.step_executions e
        where e.limit_wait_key >= l.limit_key and e.limit_wait_key <= l.limit_key
      ) as waited
    ) w;
  end if;
  -- then the keys'
  perform geneva._limit_lock(p_keys, v_waited or p_workflow_ids is null);

  if p_workflow_ids is not null and not v_waited then
    -- No one waits (as it sees now, under the keys' locks): the slots are
    -- free again (but those numbered above their key's concurrency: below)
    with unheld as (
      update geneva.limit_slots s
      set workflow_id = null
      from unnest(p_keys, p_workflow_ids) as u (key, workflow_id)
      where s.limit_key = u.key and s.workflow_id = u.workflow_id
        and s.slot <= geneva._limit_capacity(s.limit_key)
        and not exists (
          select from geneva.step_executions e
          where e.limit_wait_key >= u.key and e.limit_wait_key <= u.key
        )
      returning 1
    )
    select count(*) into v_freed from unheld;
    if v_freed = cardinality(p_keys) then
      perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
      return;
    end if;
  end if;

  -- The freed slots (left): each within its key's concurrency to the key's
  -- oldest ready waiter, one waiter a slot (in slot order; each waiter's
  -- execution locked unless another transaction holds it), with what a
  -- worker that freed one needs to run it next (its step's queue, and
  -- whether it may: takeable); those above the concurrency deleted; the
  -- rest free. And whether the waiters left may find more (v_more: a freed
  -- slot no waiter took, or a free one the keys had)
  if p_workflow_ids is not null then
    with freed as materialized (
      select s.limit_key as key, s.slot, s.slot <= geneva._limit_capacity(s.limit_key) as within
      from unnest(p_keys, p_workflow_ids) as u (key, workflow_id)
      join geneva.limit_slots s on s.limit_key = u.key and s.workflow_id = u.workflow_id
    ),
    passed as (
      select f.key, f.slot, row_number() over (partition by f.key order by f.slot) as rank
      from freed f
      where f.within
    ),
    waiter as (
      select k.key, x.id, x.workflow_id, x.ord as rank, x.queue, x.takeable
      from (select p.key, count(*) as n from passed p group by p.key) k
      cross join lateral (
        select y.id, y.workflow_id, row_number() over (order by y.id) as ord,
          geneva._step_queue(d.step_names, d.step_queues, d.queue, y.step_name) as queue,
          y.hero_missing_at is null and y.attempt = 1 and y.scheduled_for <= v_now
            and (y.await_event is null or y.event_id is not null)
            and geneva._unconditional(d.definition, d.step_names, y.step_name)
            and geneva._limit_carries(d.definition, d.step_names, y.step_name)
            as takeable
        from (
          select e.id, e.workflow_id, e.step_name, e.attempt, e.scheduled_for, e.await_event, e.event_id,
            w.workflow_type, w.hero_missing_at
          from geneva.step_executions e
          -- (each waiter's workflow read by its key, after the waiter: a
          -- lateral subquery, which the planner cannot turn into a walk of
          -- every workflow, as a plan cached while none was ready did)
          cross join lateral (
            select w.workflow_type, w.hero_missing_at
            from geneva.workflows w
            where w.id = e.workflow_id and w.state = 'ready'
            offset 0
          ) w
          where e.limit_wait_key >= k.key and e.limit_wait_key <= k.key
          order by e.limit_wait_key, e.id
          limit k.n
          for no key update of e skip locked
        ) y
        -- (read only for a worker that may run a waiter next)
        left join geneva.workflow_definitions d on d.workflow_type = y.workflow_type and p_take_queues is not null
      ) x
    ),
    handed as (
      update geneva.limit_slots s
      set workflow_id = w.workflow_id
      from passed p
      join waiter w on w.key = p.key and w.rank = p.rank
      where s.limit_key = p.key and s.slot = p.slot
      returning s.limit_key, w.id, w.queue, w.takeable
    ),
    dropped as (
      delete from geneva.limit_slots s
      using freed f
      where s.limit_key = f.key and s.slot = f.slot and not f.within
    ),
    unheld as (
      update geneva.limit_slots s
      set workflow_id = null
      from passed p
      where s.limit_key = p.key and s.slot = p.slot
        and not exists (select from waiter w where w.key = p.key and w.rank = p.rank)
    )
    select array_agg(h.id order by h.limit_key, h.id) as ids,
      array_agg(h.limit_key order by h.limit_key, h.id) as keys,
      array_agg(h.queue order by h.limit_key, h.id) as queues,
      array_agg(h.takeable order by h.limit_key, h.id) as takeable,
      (select count(*) from freed) > count(*)
        or exists (
          select
          from unnest(p_keys) as u (key)
          join geneva.limit_slots s on s.limit_key = u.key and s.workflow_id is null
          where s.slot <= geneva._limit_capacity(u.key)
        ) as more
    into v_woken
    from handed h;
    v_more := v_woken.more;
  else
    select null::bigint[] as ids, null::text[] as keys, null::text[] as queues, null::boolean[] as takeable
    into v_woken;
  end if;

  -- Then, under the keys' lock FOR UPDATE, the waiters left take the keys'
  -- free slots while each has room, oldest first (geneva._limit_take: a
  -- concurrency grown, a slot freed while none of them was ready, a next
  -- step left waiting as its key filled, geneva._limit_wait_behind)
  if v_more and (v_waited or p_workflow_ids is null) then
    select array_agg(x.id order by k.key, x.id) as ids, array_agg(k.key order by k.key, x.id) as keys,
      array_agg(x.workflow_id order by k.key, x.id) as workflow_ids
    into v_left
    from (select distinct u.key from unnest(p_keys) as u (key) where u.key is not null) k
    cross join lateral (
      select e.id, e.workflow_id
      from geneva.step_executions e
      cross join lateral (
        select from geneva.workflows w
        where w.id = e.workflow_id and w.state = 'ready'
        offset 0
      ) w
      where e.limit_wait_key >= k.key and e.limit_wait_key <= k.key
        and not e.id = any (coalesce(v_woken.ids, '{}'))
      order by e.limit_wait_key, e.id
      limit greatest(
        geneva._limit_capacity(k.key)
          - (select count(*) from geneva.limit_slots s where s.limit_key = k.key and s.workflow_id is not null),
        0
      )
      for no key update of e skip locked
    ) x;
    if v_left.ids is not null then
      select coalesce(v_woken.ids, '{}') || array_agg(l.id order by l.key, l.id) as ids,
        coalesce(v_woken.keys, '{}') || array_agg(l.key order by l.key, l.id) as keys,
        v_woken.queues, v_woken.takeable
      into v_woken
      from unnest(v_left.ids, v_left.keys, v_left.workflow_ids) as l (id, key, workflow_id)
      join geneva._limit_take(v_left.keys, v_left.workflow_ids) t
        on t.limit_key = l.key and t.workflow_id = l.workflow_id;
    end if;
  end if;

  if coalesce(cardinality(v_woken.ids), 0) = 0 then
    perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
    return;
  end if;

  -- The waiters the workers that freed slots run next (p_take_queues): per
  -- key and queue, the oldest of those handed a slot that it can run, to
  -- the takers in workflow order, each waiter's workflow locked unless
  -- another transaction holds it (not waited for: the caller holds other
  -- workflows' locks; one skipped gets its job below instead)
  if p_take_queues is not null and true = any (v_woken.takeable) then
    select array_agg(m.id order by m.id), array_agg(m.taker order by m.id)
    into v_taken, v_taken_by
    from (
      select c.id, t.workflow_id as taker
      from (
        select x.id, x.key, x.queue, row_number() over (partition by x.key, x.queue order by x.id) as rank
        from unnest(v_woken.ids, v_woken.keys, v_woken.queues, v_woken.takeable) as x (id, key, queue, takeable)
        where x.takeable
      ) c
      join (
        select u.key, u.queue, row_number() over (partition by u.key, u.queue order by u.workflow_id) as rank,
          u.workflow_id
        from unnest(p_keys, p_workflow_ids, p_take_queues) as u (key, workflow_id, queue)
        where u.queue is not null
      ) t on t.key = c.key and t.queue = c.queue and t.rank = c.rank
    ) m
    join geneva.step_executions e on e.id = m.id
    where exists (
      select from (
        select from geneva.workflows w
        where w.id = e.workflow_id and w.state = 'ready'
        for no key update of w skip locked
      ) l
    );
  end if;

  -- Every waiter woken holds its slot (its row of geneva.limit_slots); those
  -- taken are left as they are, for their takers' caller to start at once
  -- (geneva._end_running, which writes each once); the others are due now,
  -- with their River job: a new one, inserted before the execution is
  -- updated so that it is written once (a waiter's job ran when its key was
  -- full), else the one it has, brought forward
  for v_item in
    select e, w, x.key
    from unnest(v_woken.ids, v_woken.keys) as x (id, key)
    join geneva.step_executions e on e.id = x.id
    join geneva.workflows w on w.id = e.workflow_id
    where v_taken is null or not x.id = any (v_taken)
    order by x.key, x.id
  loop
    v_item.e.scheduled_for := least((v_item.e).scheduled_for, v_now);
    v_job_id := geneva._ensure_job(v_item.w, v_item.e, p_record => false);
    update geneva.step_executions e
    set limit_wait_key = null,
      limit_keys = array[v_item.key],
      scheduled_for = (v_item.e).scheduled_for,
      job_id = coalesce(v_job_id, e.job_id),
      updated_at = v_now
    where e.id = (v_item.e).id;
  end loop;

  perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
  return query
  select t.taken_by, t.started_id
  from unnest(v_taken_by, v_taken) as t (taken_by, started_id);
end;
$$;
