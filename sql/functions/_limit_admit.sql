-- geneva._limit_admit: decides, at their claim, which due executions held to
-- limits start now: the one check of every limit, in the claim path.
--
-- Called by: geneva.start_steps, for the elements it would start whose step
-- is held to a limit (geneva._limited). The caller holds their workflows'
-- and executions' locks.
--
-- The executions held only to their type's concurrency, with no slot passed
-- to them, whose keys have room for all of them, start set-wise, each
-- holding a slot of its key; the others, per execution, in id order (the
-- locks of the keys it counts taken first, all at once, before either:
-- geneva._limit_lock; not those of concurrency keys whose slot was passed to
-- it, which it does not count):
--   concurrency: each key of a limit with a concurrency (the type's
--     "concurrency", a named limit's) must have a free slot: fewer held
--     (geneva.limit_slots: executions in progress, or woken and due) than
--     its bound (geneva._limit_full), not counting a slot passed to this one.
--     When one is full, the execution does not start and is not an attempt:
--     it stays scheduled, without a job, waiting for that key
--     (limit_wait_key), gives back any slot passed to it, and
--     geneva._limit_release makes it due when a slot of the key frees (the
--     oldest waiter first, each key on its own, so a busy key never delays
--     another);
--   rate: each key of a limit with a rate counts its starts in fixed
--     windows of its `per` (geneva.limit_windows). The start is counted in
--     the first window, from now, with room in every such key; a later one
--     is reserved (limit_window_at) and the execution is scheduled at its
--     start, with its job, and starts then without counting again;
--   otherwise it starts, holding a slot of each of its concurrency keys
--     (a row of geneva.limit_slots each here; the caller records them on the
--     execution, limit_keys, in its own update), freed when it ends
--     (geneva._end_execution, geneva._end_running).
-- Returns a row per execution that starts now, with the slots it holds
-- (NULL: none).
create or replace function geneva._limit_admit(p_execution_ids bigint[])
returns table (execution_id bigint, limit_keys text[])
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_limiting text := pg_catalog.current_setting('geneva.limiting', true);
  v_now timestamptz := geneva.now();
  -- windows are aligned on this instant (date_bin's origin)
  v_origin constant timestamptz := timestamptz '2000-01-01 00:00:00+00';
  v_item record;
  v_limits record;
  v_full text;
  v_at timestamptz;
  v_window timestamptz;
  v_moved boolean;
  v_rounds integer;
  v_i integer;
  v_keys text[];
  v_stale text[];
  v_execution geneva.step_executions;
  v_fast bigint[];
  v_fast_keys text[];
begin
  -- the only writers of the limits' tables (sql/triggers/limits_guard.sql)
  perform pg_catalog.set_config('geneva.limiting', 'on', true);
  -- every key's lock first, in one order
  select array_agg(k.limit_key) into v_keys
  from unnest(p_execution_ids) as i (id)
  join geneva.step_executions e on e.id = i.id
  join geneva.workflows w on w.id = e.workflow_id
  join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  cross join lateral geneva._limit_keys(w, d, e.step_name) k
  where k.rate is not null or not coalesce(e.limit_keys, '{}') @> array[k.limit_key];
  perform geneva._limit_lock(v_keys);

  -- the common case, set-wise: executions held only to their type's
  -- concurrency (geneva._limit_carries), with no slot passed to them,
  -- whose keys have room for all of them at once, start, each holding a
  -- slot (the key's held slots counted once, under its lock); the others
  -- go one by one below
  with simple as (
    select e.id as execution_id, w.id as workflow_id, k.limit_key as key, k.concurrency
    from unnest(p_execution_ids) as i (id)
    join geneva.step_executions e on e.id = i.id
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
    cross join lateral geneva._limit_keys(w, d, e.step_name) k
    where geneva._limit_carries(d.definition, d.step_names, e.step_name)
      and e.limit_keys is null and e.limit_window_at is null
      and k.concurrency is not null
  ),
  bounded as (
    select s.key, count(*) as n, coalesce(geneva._limit_capacity(s.key), 2147483647) as bound
    from simple s
    group by s.key
  ),
  roomy as (
    select b.key, b.bound
    from bounded b
    where (select count(*) from geneva.limit_slots ls where ls.limit_key = b.key) + b.n <= b.bound
  ),
  fits as (
    select s.*, r.bound from simple s join roomy r on r.key = s.key
  ),
  taken as (
    insert into geneva.limit_slots (limit_key, workflow_id, bound)
    select f.key, f.workflow_id, f.bound from fits f
    returning limit_key
  )
  select array_agg(f.execution_id order by f.execution_id), array_agg(f.key order by f.execution_id)
  into v_fast, v_fast_keys
  from fits f;
  if v_fast is not null then
    return query select f.id, array[f.key] from unnest(v_fast, v_fast_keys) as f (id, key);
    if cardinality(v_fast) = cardinality(p_execution_ids) then
      perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
      return;
    end if;
  end if;

  for v_item in
    select e, w, d
    from unnest(p_execution_ids) as i (id)
    join geneva.step_executions e on e.id = i.id
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
    where not e.id = any (coalesce(v_fast, '{}'))
    order by e.id
  loop
    -- its limits, once: the concurrency keys with their bounds and slots
    -- held now, the rate keys with theirs
    select
      array_agg(k.limit_key order by k.limit_key) filter (where k.concurrency is not null) as conc_keys,
      array_agg(k.limit_key order by k.limit_key) filter (
        where k.concurrency is not null
          and not coalesce((v_item.e).limit_keys, '{}') @> array[k.limit_key]
      ) as new_keys,
      array_agg(k.limit_key) filter (where k.rate is not null) as rate_keys,
      array_agg(k.rate) filter (where k.rate is not null) as rates,
      array_agg(k.per) filter (where k.rate is not null) as pers
    into v_limits
    from geneva._limit_keys(v_item.w, v_item.d, (v_item.e).step_name) k;

    -- concurrency: a full key, but for a slot passed to it
    v_full := case when v_limits.new_keys is not null then geneva._limit_full(v_limits.new_keys) end;
    if v_full is not null then
      update geneva.step_executions e
      set limit_wait_key = v_full,
        limit_keys = null,
        -- (a window reserved for it is left counted: limits err on the safe side)
        limit_window_at = null,
        updated_at = v_now
      where e.id = (v_item.e).id;
      if (v_item.e).limit_keys is not null then
        perform geneva._limit_release(
          (v_item.e).limit_keys, array_fill((v_item.w).id, array[cardinality((v_item.e).limit_keys)])
        );
      end if;
      continue;
    end if;

    -- rate: the first window with room in every rate key, unless reserved
    if v_limits.rate_keys is not null and (v_item.e).limit_window_at is null then
      v_at := v_now;
      v_rounds := 0;
      loop
        v_moved := false;
        for v_i in 1 .. cardinality(v_limits.rate_keys) loop
          v_window := date_bin(v_limits.pers[v_i], v_at, v_origin);
          if coalesce((
            select lw.starts from geneva.limit_windows lw
            where lw.limit_key = v_limits.rate_keys[v_i] and lw.window_start = v_window
          ), 0) >= v_limits.rates[v_i] then
            v_at := v_window + v_limits.pers[v_i];
            v_moved := true;
          end if;
        end loop;
        v_rounds := v_rounds + 1;
        exit when not v_moved or v_rounds >= 1000;
      end loop;
      insert into geneva.limit_windows as lw (limit_key, window_start, window_end, starts)
      select r.key, date_bin(r.per, v_at, v_origin), date_bin(r.per, v_at, v_origin) + r.per, 1
      from unnest(v_limits.rate_keys, v_limits.pers) as r (key, per)
      on conflict (limit_key, window_start) do update set starts = lw.starts + 1;
      if v_at > v_now then
        update geneva.step_executions e
        set limit_window_at = v_at,
          scheduled_for = v_at,
          limit_keys = null,
          updated_at = v_now
        where e.id = (v_item.e).id
        returning e.* into v_execution;
        if (v_item.e).limit_keys is not null then
          perform geneva._limit_release(
            (v_item.e).limit_keys, array_fill((v_item.w).id, array[cardinality((v_item.e).limit_keys)])
          );
        end if;
        perform geneva._ensure_job(v_item.w, v_execution);
        continue;
      end if;
    end if;

    -- it starts, holding a slot of each concurrency key (one passed to it
    -- is counted already); a slot passed to it for a key it no longer has
    -- (its definition changed while it waited) is freed
    if v_limits.new_keys is not null then
      insert into geneva.limit_slots (limit_key, workflow_id, bound)
      select k.key, (v_item.w).id, coalesce(geneva._limit_capacity(k.key), 2147483647)
      from unnest(v_limits.new_keys) as k (key);
    end if;
    v_stale := array(
      select k.key from unnest((v_item.e).limit_keys) as k (key)
      where not k.key = any (coalesce(v_limits.conc_keys, '{}'))
    );
    if cardinality(v_stale) > 0 then
      perform geneva._limit_release(v_stale, array_fill((v_item.w).id, array[cardinality(v_stale)]));
    end if;
    execution_id := (v_item.e).id;
    limit_keys := v_limits.conc_keys;
    return next;
  end loop;
  perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
end;
$$;
