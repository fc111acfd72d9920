-- geneva._limit_admit: decides, at their claim, which due executions held to
-- limits start now: the one admission rule. An execution starts when it
-- holds a slot of each of its concurrency keys (the type's "concurrency", a
-- named limit's) and, for each of its rate limits, its start is counted in
-- the current window; otherwise it does not start and is not an attempt:
--   a key full (no slot it could take): it stays scheduled, without a job,
--     waiting for that key (limit_wait_key: the first in key order), and
--     gives back the slots it took or was passed; geneva._limit_release
--     makes it due when a slot of the key frees (the oldest waiter first,
--     each key on its own, so a busy key never delays another);
--   a rate limit's current window full: its start is counted in the first
--     window with room in every rate key (geneva.limit_windows, fixed windows
--     of each limit's `per`), reserved for it (limit_window_at), and it is
--     scheduled at that window's start, with its job, giving back its slots;
--     then it starts without counting again.
-- A slot is a row of geneva.limit_slots, numbered within the key's
-- concurrency, that the execution's workflow holds until the execution ends
-- (geneva._end_running, geneva._end_execution, or carried on to its next
-- step). A slot passed to it while it waited (for a key it has no more: its
-- definition changed) is freed.
--
-- How: first, in one statement and without any lock of a key, the
-- executions held to their type's concurrency only (the common case): one
-- that holds its slot already (passed to it) starts, and one that holds
-- none takes a free row of the key, FOR UPDATE SKIP LOCKED, so that claims
-- of a key with free slots never wait for each other, and starts (not a key
-- with a slot held above a concurrency lowered since: it must count them).
-- The others lock the rows of the slots they hold (and those of
-- p_lock_executions), then take the locks of all their keys at once, in key
-- order, FOR UPDATE (geneva._limit_lock: a free under way is waited for and
-- seen, and one that starts later waits and then sees the waiter left), and
-- are decided one by one in id order: their slots through geneva._limit_take
-- (a free row or a new number, while the key has room), then their rate
-- windows.
--
-- Called by: geneva.start_steps, for the elements it would start whose step
-- is held to a limit (geneva._limited), holding their workflows' and
-- executions' locks; with p_lock_executions, executions whose slots it
-- frees after (those it ends), so that all its locks of slots and keys are
-- taken in one go, in that order.
-- Locks: the free rows it takes; the rows of the slots it frees, then the
-- keys' rows, as above.
-- Returns the executions that start now, as a JSON object: each one's id to
-- the keys of the slots it holds (null: none).
-- Plans: no bitmap scans (enable_bitmapscan off; see geneva.limit_slots).
create or replace function geneva._limit_admit(p_execution_ids bigint[], p_lock_executions bigint[] default null)
returns jsonb
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
set enable_bitmapscan = off
as $$
declare
  v_limiting text := pg_catalog.current_setting('geneva.limiting', true);
  v_now timestamptz := geneva.now();
  -- windows are aligned on this instant (date_bin's origin)
  v_origin constant timestamptz := timestamptz '2000-01-01 00:00:00+00';
  v_admitted jsonb;
  v_others bigint[];
  v_item record;
  v_limits record;
  v_got text[];
  v_back text[];
  v_full text;
  v_at timestamptz;
  v_window timestamptz;
  v_moved boolean;
  v_rounds integer;
  v_i integer;
  v_execution geneva.step_executions;
  v_held_ids bigint[];
  v_held_keys text[];
  v_held_by bigint[];
begin
  -- the only writers of the limits' tables (sql/guards/limits_guard.sql)
  perform pg_catalog.set_config('geneva.limiting', 'on', true);

  -- Without a lock, the executions held to their type's concurrency only
  -- (geneva._limit_carries: one slot of one key, geneva._concurrency_key):
  -- one that holds the key's slot (passed to it) starts; one that holds none
  -- takes a free row of the key (those of a key in its slot order, the
  -- executions in id order) and starts; the others (another key's slot
  -- passed to it, none free) and every other execution go the way below
  with x as materialized (
    select e.id, e.workflow_id, e.limit_keys,
      case when geneva._limit_carries(d.definition, d.step_names, e.step_name) then
        geneva._concurrency_key(d.definition, w.workflow_type, w.group_name, w.hero_type, w.hero_id, w.parent_id)
      end as key
    from unnest(p_execution_ids) as i (id)
    join geneva.step_executions e on e.id = i.id
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  ),
  want as (
    select x.key, geneva._limit_capacity(x.key) as capacity, array_agg(x.workflow_id order by x.id) as workflow_ids
    from x
    where x.key is not null and x.limit_keys is null
    group by x.key
  ),
  free as (
    select w.key, w.workflow_ids[f.ord::integer] as workflow_id, f.slot
    from want w
    cross join lateral (
      select y.slot, row_number() over (order by y.slot) as ord
      from (
        select s.slot
        from geneva.limit_slots s
        where s.limit_key = w.key and s.workflow_id is null and s.slot <= w.capacity
          -- (no slot held above the concurrency: else the slots held count)
          and not exists (select from geneva.limit_slots a where a.limit_key = w.key and a.slot > w.capacity)
        order by s.slot
        limit cardinality(w.workflow_ids)
        for update of s skip locked
      ) y
    ) f
  ),
  taken as (
    update geneva.limit_slots s
    set workflow_id = f.workflow_id
    from free f
    where s.limit_key = f.key and s.slot = f.slot
    returning s.limit_key, s.workflow_id
  )
  select jsonb_object_agg(x.id::text, jsonb_build_array(x.key)) filter (where a.admitted),
    array_agg(x.id order by x.id) filter (where not a.admitted)
  into v_admitted, v_others
  from x
  left join taken t on t.limit_key = x.key and t.workflow_id = x.workflow_id
  cross join lateral (
    select coalesce(x.limit_keys = array[x.key], false) or t.workflow_id is not null as admitted
  ) a;

  if v_others is null then
    perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
    return coalesce(v_admitted, '{}');
  end if;

  -- The others: the slots they hold (passed to them), and the caller's
  -- executions' (p_lock_executions), as (execution, key) pairs
  select array_agg(e.id order by h.key, e.id), array_agg(h.key order by h.key, e.id),
    array_agg(e.workflow_id order by h.key, e.id)
  into v_held_ids, v_held_keys, v_held_by
  from unnest(v_others || coalesce(p_lock_executions, '{}')) as i (id)
  join geneva.step_executions e on e.id = i.id
  cross join lateral unnest(e.limit_keys) as h (key);
  -- their rows first, then the locks of every key they have or hold, at
  -- once (so that no one holding a key's lock waits for a slot's row: see
  -- geneva._limit_release)
  perform
  from geneva.limit_slots s
  join unnest(v_held_keys, v_held_by) as h (key, workflow_id)
    on s.limit_key = h.key and s.workflow_id = h.workflow_id
  order by s.limit_key, s.slot
  for no key update of s;
  perform geneva._limit_lock(
    array(
      select k.limit_key
      from unnest(v_others) as i (id)
      join geneva.step_executions e on e.id = i.id
      join geneva.workflows w on w.id = e.workflow_id
      join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
      cross join lateral geneva._limit_keys(w, d, e.step_name) k
    ) || v_held_keys,
    true
  );

  for v_item in
    select e, w, d, array(select h.key from unnest(v_held_ids, v_held_keys) as h (id, key) where h.id = e.id) as held
    from unnest(v_others) as i (id)
    join geneva.step_executions e on e.id = i.id
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
    order by e.id
  loop
    -- its limits: the concurrency keys, those it holds no slot of, and
    -- the rate keys with their bounds
    select
      array_agg(k.limit_key order by k.limit_key) filter (where k.concurrency is not null) as keys,
      array_agg(k.limit_key order by k.limit_key) filter (
        where k.concurrency is not null
          and not coalesce(v_item.held, '{}') @> array[k.limit_key]
      ) as unheld,
      array_agg(k.limit_key) filter (where k.rate is not null) as rate_keys,
      array_agg(k.rate) filter (where k.rate is not null) as rates,
      array_agg(k.per) filter (where k.rate is not null) as pers
    into v_limits
    from geneva._limit_keys(v_item.w, v_item.d, (v_item.e).step_name) k;

    -- concurrency: a slot of each key it holds none of, or the first key
    -- that has no room
    v_got := null;
    v_full := null;
    if v_limits.unheld is not null then
      select array_agg(t.limit_key) into v_got
      from geneva._limit_take(
        v_limits.unheld, array_fill((v_item.w).id, array[cardinality(v_limits.unheld)])
      ) t;
      v_full := (
        select min(u.key) from unnest(v_limits.unheld) as u (key) where not u.key = any (coalesce(v_got, '{}'))
      );
    end if;

    -- rate: the first window with room in every rate key, unless reserved
    v_at := v_now;
    if v_full is null and v_limits.rate_keys is not null and (v_item.e).limit_window_at is null then
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
    end if;

    -- the slots it gives back: all it holds when it does not start now,
    -- else those of keys it has no more
    v_back := case
      when v_full is not null or v_at > v_now then coalesce(v_got, '{}') || coalesce(v_item.held, '{}')
      else array(
        select h.key from unnest(v_item.held) as h (key)
        where not h.key = any (coalesce(v_limits.keys, '{}'))
      )
    end;
    if cardinality(v_back) > 0 then
      perform geneva._limit_release(v_back, array_fill((v_item.w).id, array[cardinality(v_back)]));
    end if;

    if v_full is not null then
      update geneva.step_executions e
      set limit_wait_key = v_full,
        limit_keys = null,
        -- (a window reserved for it is left counted: limits err on the safe side)
        limit_window_at = null,
        updated_at = v_now
      where e.id = (v_item.e).id;
    elsif v_at > v_now then
      update geneva.step_executions e
      set limit_window_at = v_at,
        scheduled_for = v_at,
        limit_keys = null,
        updated_at = v_now
      where e.id = (v_item.e).id
      returning e.* into v_execution;
      perform geneva._ensure_job(v_item.w, v_execution);
    else
      v_admitted := coalesce(v_admitted, '{}') || jsonb_build_object((v_item.e).id::text, to_jsonb(v_limits.keys));
    end if;
  end loop;
  perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
  return coalesce(v_admitted, '{}');
end;
$$;
