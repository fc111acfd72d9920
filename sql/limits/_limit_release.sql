-- geneva._limit_release: slots of limit keys were freed (with
-- p_workflow_ids: each element of p_keys is the slot the workflow of the same
-- position held, its row of geneva.limit_slots handed over or deleted), or may have (a
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
-- holding slots ended), geneva._advance_many (a slot carried to a next step
-- that did not take it over), geneva._limit_admit (an execution gave back
-- a slot it could not use), geneva.pause_workflow (a paused workflow's kept
-- execution gives back its slot), geneva.define_limit (a limit may have
-- grown), geneva.housekeep (every key with waiters: a backstop, which also
-- wakes a step created behind waiters that no free saw: see
-- geneva._schedule_step).
-- Locks: no key's lock. It locks the freed rows (FOR NO KEY UPDATE, in key
-- and slot order) and first hands them over to the oldest waiters, each row
-- updated in place to its new holder (workflow_id, not a key column: see
-- geneva.limit_slots), which a FOR KEY SHARE does not conflict with, so
-- that an end or a claim counting the key's slots meanwhile counts a slot
-- handed over as held (geneva._limit_full). The rows no waiter took it
-- deletes (waiting for those who locked them FOR KEY SHARE, and counted
-- them, to commit), then looks for waiters again with new statements, so
-- that it sees any left waiting by a claim or an end that found the key
-- full before they were freed (geneva._limit_full), and passes them the
-- freed numbers. A waiter with no freed row or number takes a free number
-- without waiting for anyone (geneva._limit_take), or keeps waiting.
-- Then each woken execution's row, skipping those locked (whose workflow's
-- lock it does not take, but to start it, skipping it then too: a waiting
-- execution has no job, so no claim takes it, and no other function that
-- locks it waits for a slot's row or a key's lock first).
-- Plans: as geneva.start_steps (index lookups by key and id, planned once
-- per session, whatever the tables' size then), whoever calls it first,
-- and no bitmap scans (see geneva.limit_slots).
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
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
set enable_bitmapscan = off
as $$
#variable_conflict use_column
declare
  v_limiting text := pg_catalog.current_setting('geneva.limiting', true);
  v_now timestamptz := geneva.now();
  v_freed_keys text[];
  v_freed_bounds integer[];
  v_freed_slots integer[];
  v_held_keys text[];
  v_held_slots integer[];
  v_handed_keys text[];
  v_handed_slots integer[];
  v_round integer;
  v_all_ids bigint[];
  v_all_keys text[];
  v_all_workflows bigint[];
  v_all_queues text[];
  v_all_takeable boolean[];
  v_passed_keys text[];
  v_passed_workflows bigint[];
  v_rest_keys text[];
  v_rest_workflows bigint[];
  v_woken record;
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
  if p_workflow_ids is not null then
    -- the freed rows, locked in key and slot order (FOR NO KEY UPDATE: a
    -- hand-over updates a row in place)
    select array_agg(l.limit_key order by l.limit_key, l.slot), array_agg(l.slot order by l.limit_key, l.slot),
      array_agg(l.bound order by l.limit_key, l.slot)
    into v_held_keys, v_held_slots, v_freed_bounds
    from (
      select ls.limit_key, ls.slot, ls.bound
      from geneva.limit_slots ls
      join unnest(p_keys, p_workflow_ids) as u (key, workflow_id)
        on ls.limit_key = u.key and ls.workflow_id = u.workflow_id
      order by ls.limit_key, ls.slot
      for no key update of ls
    ) l;
    v_freed_keys := v_held_keys;
    v_freed_slots := v_held_slots;
  end if;

  -- Two rounds: the freed rows are handed over to the waiters there are
  -- (1); those no waiter took are deleted, and their numbers passed to the
  -- waiters there are after that (2, the backstop's only round)
  for v_round in case when p_workflow_ids is null then 2 else 1 end .. 2 loop
    if v_round = 2 and p_workflow_ids is not null then
      -- (every row handed over: none freed)
      exit when cardinality(coalesce(v_handed_slots, '{}')) = cardinality(coalesce(v_held_slots, '{}'));
      with freed as (
        delete from geneva.limit_slots ls
        using unnest(v_held_keys, v_held_slots) as u (key, slot)
        where ls.limit_key = u.key and ls.slot = u.slot
          and not exists (
            select from unnest(v_handed_keys, v_handed_slots) as h (key, slot)
            where h.key = u.key and h.slot = u.slot
          )
        returning ls.limit_key, ls.bound, ls.slot
      )
      select array_agg(f.limit_key), array_agg(f.bound), array_agg(f.slot)
      into v_freed_keys, v_freed_bounds, v_freed_slots
      from freed f;
      exit when v_freed_keys is null;
    end if;
    -- (most frees pass nothing: no one waits for their keys)
    continue when not exists (
      select
      from unnest(p_keys) as u (key)
      join geneva.step_executions e
        on e.limit_wait_key >= u.key and e.limit_wait_key <= u.key
    );

    -- Each key's oldest waiters, as many as it has slots to pass, whose
    -- workflows are ready (a paused one's waiter is passed over), each
    -- execution locked unless another transaction holds it; with what a
    -- worker that freed a slot needs to run it (its step's queue, and
    -- whether it may: takeable), but those woken in the first round. Per
    -- key, as many as this round has freed rows (none for a slot not held);
    -- but a slot taken above a concurrency lowered since
    -- is passed on only while the key has room under the new one, so that a lowered concurrency applies while others
    -- wait too (a count without the key's lock, which a free cannot take
    -- after locking slots: at worst one more passes, once, after a lowering).
    -- The backstop passes what the key has free under its capacity.
    select array_agg(x.id order by k.key, x.id) as ids,
      array_agg(k.key order by k.key, x.id) as keys,
      array_agg(x.workflow_id order by k.key, x.id) as workflow_ids,
      array_agg(
        geneva._step_queue(d.step_names, d.step_queues, d.queue, x.step_name) order by k.key, x.id
      ) filter (where p_take_queues is not null) as queues,
      array_agg(
        x.hero_missing_at is null and x.attempt = 1
          and (x.await_event is null or x.event_id is not null)
          and geneva._unconditional(d.definition, d.step_names, x.step_name)
          and geneva._limit_carries(d.definition, d.step_names, x.step_name)
        order by k.key, x.id
      ) filter (where p_take_queues is not null) as takeable
    into v_woken
    from (
      select c.key,
        case
          when p_workflow_ids is null
            then c.capacity - (select count(*) from geneva.limit_slots ls where ls.limit_key = c.key)
          when f.bound > c.capacity
            then least(f.n, c.capacity - (select count(*) from geneva.limit_slots ls where ls.limit_key = c.key))
          else f.n
        end as free
      from (
        select u.key, coalesce(geneva._limit_capacity(u.key), 2147483647) as capacity
        from (select distinct u.key from unnest(p_keys) as u (key) where u.key is not null) u
      ) c
      left join lateral (
        select count(*) as n, max(b.bound) as bound
        from unnest(v_freed_keys, v_freed_bounds) as b (key, bound)
        where b.key = c.key
      ) f on true
      -- (not folded into the statement: each expression would be copied)
      offset 0
    ) k
    cross join lateral (
      -- (the key as a range, not an equality: with `= key`, the order by id
      -- alone would let the planner walk the primary key, every execution
      -- ever recorded, filtering for the key; the partial index
      -- step_executions_limit_waiting is the only one in this order. No
      -- state: a waiter is scheduled, and a state = 'scheduled' would let a
      -- plan cached while no one waited read every scheduled execution
      -- instead: see that index)
      select e.id, e.workflow_id, e.step_name, e.attempt, e.await_event, e.event_id,
        w.workflow_type, w.hero_missing_at
      from geneva.step_executions e
      -- (each waiter's workflow read by its key, after the waiter: a lateral
      -- subquery, which the planner cannot turn into a walk of every
      -- workflow, as a plan cached while none was ready did)
      cross join lateral (
        select w.workflow_type, w.hero_missing_at
        from geneva.workflows w
        where w.id = e.workflow_id and w.state = 'ready'
        offset 0
      ) w
      where e.limit_wait_key >= k.key and e.limit_wait_key <= k.key
        and not e.id = any (coalesce(v_all_ids, '{}'))
      order by e.limit_wait_key, e.id
      limit greatest(k.free, 0)
      for no key update of e skip locked
    ) x
    left join geneva.workflow_definitions d on d.workflow_type = x.workflow_type and p_take_queues is not null;
    continue when v_woken.ids is null;

    -- Every waiter woken takes its slot first: a slot of its key freed here,
    -- its number with it, in order (a number within the key's concurrency
    -- now: one above a lowered concurrency is not passed on), handed over
    -- (1) or taken again (2), else a free number (geneva._limit_take); one
    -- that gets neither keeps waiting.
    if v_round = 1 then
      with handed as (
        update geneva.limit_slots as ls
        set workflow_id = w.workflow_id
        from (
          select x.key, x.workflow_id, row_number() over (partition by x.key order by x.ord) as rank
          from unnest(v_woken.keys, v_woken.workflow_ids) with ordinality as x (key, workflow_id, ord)
        ) w
        join (
          select b.key, b.slot, row_number() over (partition by b.key order by b.slot) as rank
          from unnest(v_freed_keys, v_freed_slots) as b (key, slot)
          where b.slot <= coalesce(geneva._limit_capacity(b.key), 2147483647)
        ) f on f.key = w.key and f.rank = w.rank
        where ls.limit_key = f.key and ls.slot = f.slot
        returning ls.limit_key, ls.workflow_id, ls.slot
      )
      select array_agg(h.limit_key), array_agg(h.workflow_id), array_agg(h.slot)
      into v_passed_keys, v_passed_workflows, v_handed_slots
      from handed h;
      v_handed_keys := v_passed_keys;
    else
      with passed as (
        insert into geneva.limit_slots as ls (limit_key, workflow_id, bound, slot)
        select w.key, w.workflow_id, f.bound, f.slot
        from (
          select x.key, x.workflow_id, row_number() over (partition by x.key order by x.ord) as rank
          from unnest(v_woken.keys, v_woken.workflow_ids) with ordinality as x (key, workflow_id, ord)
        ) w
        join (
          select b.key, b.slot, b.bound, row_number() over (partition by b.key order by b.slot) as rank
          from unnest(v_freed_keys, v_freed_slots, v_freed_bounds) as b (key, slot, bound)
          where b.slot <= coalesce(geneva._limit_capacity(b.key), 2147483647)
        ) f on f.key = w.key and f.rank = w.rank
        returning ls.limit_key, ls.workflow_id
      )
      select array_agg(p.limit_key), array_agg(p.workflow_id) into v_passed_keys, v_passed_workflows
      from passed p;
    end if;
    if cardinality(coalesce(v_passed_keys, '{}')) < cardinality(v_woken.ids) then
      select array_agg(x.key order by x.ord), array_agg(x.workflow_id order by x.ord)
      into v_rest_keys, v_rest_workflows
      from unnest(v_woken.keys, v_woken.workflow_ids) with ordinality as x (key, workflow_id, ord)
      where not exists (
        select from unnest(v_passed_keys, v_passed_workflows) as p (key, workflow_id)
        where p.key = x.key and p.workflow_id = x.workflow_id
      );
      select array_agg(t.limit_key), array_agg(t.workflow_id) into v_rest_keys, v_rest_workflows
      from geneva._limit_take(v_rest_keys, v_rest_workflows) t;
      select array_agg(x.id order by x.ord) as ids,
        array_agg(x.key order by x.ord) as keys,
        array_agg(x.workflow_id order by x.ord) as workflow_ids,
        array_agg(x.queue order by x.ord) filter (where p_take_queues is not null) as queues,
        array_agg(x.takeable order by x.ord) filter (where p_take_queues is not null) as takeable
      into v_woken
      from unnest(v_woken.ids, v_woken.keys, v_woken.workflow_ids, v_woken.queues, v_woken.takeable)
        with ordinality as x (id, key, workflow_id, queue, takeable, ord)
      where exists (
        select from unnest(v_passed_keys || coalesce(v_rest_keys, '{}'), v_passed_workflows || coalesce(v_rest_workflows, '{}'))
          as p (key, workflow_id)
        where p.key = x.key and p.workflow_id = x.workflow_id
      );
    end if;
    if v_woken.ids is not null then
      v_all_ids := v_all_ids || v_woken.ids;
      v_all_keys := v_all_keys || v_woken.keys;
      v_all_workflows := v_all_workflows || v_woken.workflow_ids;
      v_all_queues := v_all_queues || v_woken.queues;
      v_all_takeable := v_all_takeable || v_woken.takeable;
    end if;
  end loop;

  if v_all_ids is null then
    perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
    return;
  end if;
  select v_all_ids as ids, v_all_keys as keys, v_all_workflows as workflow_ids, v_all_queues as queues,
    v_all_takeable as takeable
  into v_woken;

  -- The waiters the workers that freed slots run next (p_take_queues): per
  -- key and queue, the oldest takeable waiters to the takers in workflow
  -- order, each waiter's workflow locked unless another transaction holds
  -- it (not waited for: the caller holds other workflows' locks; one
  -- skipped is woken below instead)
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

  -- those taken start, as a claim would start them, without a job (the
  -- same two writes as start_steps' last statement: one function for both
  -- cost each claim 0.9% and each saturated end 4%, bench/NOTES.md)
  if v_taken is not null then
    with started as (
      update geneva.step_executions e
      set state = 'in_progress',
        started_at = v_now,
        limit_wait_key = null,
        limit_keys = array[x.key],
        scheduled_for = least(e.scheduled_for, v_now),
        updated_at = v_now
      from unnest(v_woken.ids, v_woken.keys) as x (id, key)
      where e.id = x.id and x.id = any (v_taken)
      returning e.workflow_id, e.step_name
    )
    update geneva.workflows w
    set state = 'performing',
      current_step_name = s.step_name,
      started_at = coalesce(w.started_at, v_now),
      updated_at = v_now
    from started s
    where w.id = s.workflow_id;
  end if;

  -- the others are made due now, each with its River job: a new one,
  -- inserted before the execution is updated so that it is written once
  -- (a waiter's job ran when its key was full), else the one it has,
  -- brought forward
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
