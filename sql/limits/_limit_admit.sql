-- geneva._limit_admit: decides, at their claim, which due executions held to
-- limits start now: the one check of every limit, in the claim path.
--
-- Called by: geneva.start_steps, for the elements it would start whose step
-- is held to a limit (geneva._limited). The caller holds their workflows'
-- and executions' locks.
--
-- The executions held only to their type's concurrency, with no slot passed
-- to them, first take a slot each, set-wise: in one statement those of keys
-- far from their bound, the rest by geneva._limit_take (a free number of
-- the key, no lock waited for, but the key's lock when the batch has more
-- of them than the key has room for); those that got one start. The
-- others, per execution, in id order (the locks of their keys taken first,
-- all at once: those of rate limits before the set-wise start, those of
-- concurrency keys after it; geneva._limit_lock):
--   concurrency: it takes a slot of each key of a limit with a concurrency
--     (the type's "concurrency", a named limit's) but those passed to it
--     (geneva._limit_take). When it cannot take one, it gives back those it
--     took, and the key is full (geneva._limit_full, which waits for the
--     frees under way) or its last free numbers were being taken: it does
--     not start and is not an attempt: it stays scheduled, without a job,
--     waiting for that key (limit_wait_key), gives back any slot passed to
--     it, and geneva._limit_release makes it due when a slot of the key
--     frees (the oldest waiter first, each key on its own, so a busy key
--     never delays another). A claim whose key's last free numbers are
--     being taken by claims in flight waits for the first of those, at most
--     50 ms, once (geneva._limit_await_number), and tries again. One race
--     leaves it waiting with a slot free: that claim had not committed by
--     then, and its step ends before this one commits; housekeeping's
--     backstop wakes it (geneva._limit_release with no slots freed);
--   rate: each key of a limit with a rate counts its starts in fixed
--     windows of its `per` (geneva.limit_windows). The start is counted in
--     the first window, from now, with room in every such key; a later one
--     is reserved (limit_window_at) and the execution is scheduled at its
--     start, with its job (giving back the slots it took), and starts then
--     without counting again;
--   otherwise it starts, holding a slot of each of its concurrency keys
--     (a row of geneva.limit_slots each; the caller records them on the
--     execution, limit_keys, in its own update), freed when it ends
--     (geneva._end_execution, geneva._end_running).
-- Returns a row per execution that starts now, with the slots it holds
-- (NULL: none).
-- Plans: no bitmap scans (enable_bitmapscan off; see geneva.limit_slots).
create or replace function geneva._limit_admit(p_execution_ids bigint[])
returns table (execution_id bigint, limit_keys text[])
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
set enable_bitmapscan = off
as $$
#variable_conflict use_column
declare
  v_limiting text := pg_catalog.current_setting('geneva.limiting', true);
  v_now timestamptz := geneva.now();
  -- windows are aligned on this instant (date_bin's origin)
  v_origin constant timestamptz := timestamptz '2000-01-01 00:00:00+00';
  v_batch record;
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
  v_quick bigint[];
  v_quick_keys text[];
  -- (the executions of the common case that the first statement left)
  v_simple_ids bigint[];
  v_simple_workflows bigint[];
  v_simple_keys text[];
  v_got text[];
  v_try integer;
begin
  -- the only writers of the limits' tables (sql/guards/limits_guard.sql)
  perform pg_catalog.set_config('geneva.limiting', 'on', true);
  -- First, in one statement, the common case far from its bound: the
  -- executions held only to their type's concurrency
  -- (geneva._limit_carries), with no slot passed to them and no window
  -- reserved, of keys with room for twice as many as the batch has of them
  -- (as this transaction sees it), each take a free number of the key
  -- (geneva._limit_numbers, as geneva._limit_take's first round), no lock
  -- of the key taken, and start. The key and its concurrency are the definition's, as
  -- geneva._limit_keys and geneva._limit_capacity read them. The others (a
  -- number another claim took first, a key near its bound, any other limit)
  -- go the ways below. (A limit never reached costs this statement alone
  -- at a claim: a statement's start-up, its expressions compiled again at
  -- every call, is most of what a limit costs.)
  with x as (
    select e.id, e.workflow_id,
      geneva._limit_key(
        'concurrency', w.workflow_type, d.definition -> 'concurrency' ->> 'by',
        w.workflow_type, w.group_name, w.hero_type, w.hero_id
      ) as key,
      coalesce((d.definition -> 'concurrency' ->> 'limit')::integer, 2147483647) as capacity
    from unnest(p_execution_ids) as i (id)
    join geneva.step_executions e on e.id = i.id
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
    where e.limit_keys is null and e.limit_window_at is null
      and geneva._limit_carries(d.definition, d.step_names, e.step_name)
  ),
  k as materialized (
    select g.key, g.capacity, g.held, g.workflow_ids
    from (
      select x.key, x.capacity, array_agg(x.workflow_id order by x.id) as workflow_ids,
        (select count(*) from geneva.limit_slots ls where ls.limit_key = x.key)::integer as held
      from x
      group by x.key, x.capacity
    ) g
    where 2 * cardinality(g.workflow_ids) <= g.capacity - g.held
  ),
  taken as (
    insert into geneva.limit_slots as ls (limit_key, workflow_id, bound, slot)
    select k.key, p.workflow_id, k.capacity, p.slot
    from k
    cross join lateral unnest(
      k.workflow_ids,
      geneva._limit_numbers(k.key, k.capacity, k.held, cardinality(k.workflow_ids), k.capacity > 64)
    ) as p (workflow_id, slot)
    where p.slot is not null and p.workflow_id is not null
    order by k.key, p.slot
    on conflict do nothing
    returning ls.limit_key, ls.workflow_id
  )
  -- (those that took one, and the rest of these executions, for the
  -- set-wise way below)
  select array_agg(x.id order by x.id) filter (where t.workflow_id is not null),
    array_agg(x.key order by x.id) filter (where t.workflow_id is not null),
    array_agg(x.id order by x.id) filter (where t.workflow_id is null),
    array_agg(x.workflow_id order by x.id) filter (where t.workflow_id is null),
    array_agg(x.key order by x.id) filter (where t.workflow_id is null)
  into v_quick, v_quick_keys, v_simple_ids, v_simple_workflows, v_simple_keys
  from x
  left join taken t on t.limit_key = x.key and t.workflow_id = x.workflow_id;
  if v_quick is not null then
    return query select q.id, array[q.key] from unnest(v_quick, v_quick_keys) as q (id, key);
    if cardinality(v_quick) = cardinality(p_execution_ids) then
      perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
      return;
    end if;
  end if;

  -- The others' limit keys, read once: the rate keys, and every
  -- execution's concurrency keys it holds no slot of
  select array_agg(k.limit_key) filter (where k.rate is not null) as rate_keys,
    array_agg(e.id order by e.id) filter (where s.unheld) as unheld_ids,
    array_agg(k.limit_key order by e.id) filter (where s.unheld) as unheld_keys
  into v_batch
  from unnest(p_execution_ids) as i (id)
  join geneva.step_executions e on e.id = i.id
  join geneva.workflows w on w.id = e.workflow_id
  join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  cross join lateral geneva._limit_keys(w, d, e.step_name) k
  cross join lateral (
    select
      k.concurrency is not null and not coalesce(e.limit_keys, '{}') @> array[k.limit_key] as unheld
  ) s
  where v_quick is null or not e.id = any (v_quick);

  -- the locks of the rate limits' keys first, in one order (a window's
  -- count is read, then written)
  if v_batch.rate_keys is not null then
    perform geneva._limit_lock(v_batch.rate_keys);
  end if;

  -- the rest of the common case (above), set-wise: a key near its bound,
  -- or a number another claim took first; each takes a slot
  -- (geneva._limit_take) and those that got one start; the others go one by
  -- one below
  if v_simple_ids is not null then
    -- (a key with more of them than it has room for, as this transaction
    -- sees it, is near its bound: its lock first, so that a claim that will
    -- go on to the per-execution way for it holds no slot of it taken
    -- without the lock while it waits for the lock)
    select array_agg(k.key) into v_keys
    from (
      select u.key, count(*) as n
      from unnest(v_simple_keys) as u (key)
      group by u.key
    ) k
    where k.n > coalesce(geneva._limit_capacity(k.key), 2147483647)
      - (select count(*) from geneva.limit_slots ls where ls.limit_key = k.key);
    if v_keys is not null then
      perform geneva._limit_lock(v_keys);
    end if;
    select array_agg(f.id order by f.id), array_agg(f.key order by f.id)
    into v_fast, v_fast_keys
    from unnest(v_simple_ids, v_simple_workflows, v_simple_keys) as f (id, workflow_id, key)
    join geneva._limit_take(v_simple_keys, v_simple_workflows) t
      on t.limit_key = f.key and t.workflow_id = f.workflow_id;
  end if;
  if v_fast is not null then
    return query select f.id, array[f.key] from unnest(v_fast, v_fast_keys) as f (id, key);
    if cardinality(v_fast) + coalesce(cardinality(v_quick), 0) = cardinality(p_execution_ids) then
      perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
      return;
    end if;
  end if;

  -- the others' concurrency keys' locks, in one order, after the rate
  -- keys' (a key near its bound: their claims take turns)
  select array_agg(u.key) into v_keys
  from unnest(v_batch.unheld_ids, v_batch.unheld_keys) as u (id, key)
  where not u.id = any (coalesce(v_fast, '{}'));
  if v_keys is not null then
    perform geneva._limit_lock(v_keys);
  end if;

  for v_item in
    select e, w, d
    from unnest(p_execution_ids) as i (id)
    join geneva.step_executions e on e.id = i.id
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
    where not e.id = any (coalesce(v_fast, '{}')) and not e.id = any (coalesce(v_quick, '{}'))
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

    -- concurrency: a slot of each key but those passed to it, or the first
    -- key it could not take one of, full (after the frees under way) or
    -- its last free numbers being taken by others
    v_full := null;
    v_got := null;
    if v_limits.new_keys is not null then
      for v_try in 1 .. 2 loop
        v_full := geneva._limit_full(v_limits.new_keys);
        exit when v_full is not null;
        select array_agg(t.limit_key order by t.limit_key) into v_got
        from geneva._limit_take(
          v_limits.new_keys, array_fill((v_item.w).id, array[cardinality(v_limits.new_keys)])
        ) t;
        exit when cardinality(coalesce(v_got, '{}')) = cardinality(v_limits.new_keys);
        -- (its own, which no one else has seen: no waiter to pass them to)
        if v_got is not null then
          delete from geneva.limit_slots ls
          where ls.limit_key = any (v_got) and ls.workflow_id = (v_item.w).id;
        end if;
        v_stale := array(
          select k.key from unnest(v_limits.new_keys) as k (key) where not k.key = any (coalesce(v_got, '{}'))
        );
        v_got := null;
        -- room, but its free numbers are being taken by claims in flight:
        -- wait, briefly and once, for the one taking the first to commit
        -- (then its slot is a row this claim sees, locks and waits for the
        -- free of; briefly, as that claim may be waiting for a lock this
        -- one holds)
        exit when v_try = 2;
        perform geneva._limit_await_number(v_stale[1]);
      end loop;
      if v_full is null and v_got is null then
        v_full := v_stale[1];
      end if;
    end if;
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
        -- (the slots it took, its own: given back)
        if v_got is not null then
          delete from geneva.limit_slots ls
          where ls.limit_key = any (v_got) and ls.workflow_id = (v_item.w).id;
        end if;
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

    -- it starts, holding a slot of each concurrency key (taken above, or
    -- passed to it); a slot passed to it for a key it no longer has (its
    -- definition changed while it waited) is freed
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
