-- geneva._limit_admit: decides, at their claim, which due executions held to
-- limits start now: the one check of every limit, in the claim path.
--
-- Called by: geneva.start_steps, for the elements it would start whose step
-- is held to a limit (geneva._limited). The caller holds their workflows'
-- and executions' locks.
--
-- Per execution, in id order (the keys' locks taken first, all at once:
-- geneva._limit_lock):
--   concurrency: each key of a limit with a concurrency (the type's
--     "concurrency", a named limit's) must have a free slot: fewer
--     executions holding one (in progress, or woken and due) than its
--     bound, not counting a slot passed to this one. When one is full, the
--     execution does not start and is not an attempt: it stays scheduled,
--     without a job, waiting for that key (limit_wait_key), gives back any
--     slot passed to it, and geneva._limit_release makes it due when a slot
--     of the key frees (the oldest waiter first, each key on its own, so a
--     busy key never delays another);
--   rate: each key of a limit with a rate counts its starts in fixed
--     windows of its `per` (geneva.limit_windows). The start is counted in
--     the first window, from now, with room in every such key; a later one
--     is reserved (limit_window_at) and the execution is scheduled at its
--     start, with its job, and starts then without counting again;
--   otherwise it starts, holding a slot of each of its concurrency keys
--     (limit_keys), freed when it ends (geneva._end_execution,
--     geneva._end_running).
-- Returns the ids of the executions that start now.
create or replace function geneva._limit_admit(p_execution_ids bigint[])
returns bigint[]
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  -- windows are aligned on this instant (date_bin's origin)
  v_origin constant timestamptz := timestamptz '2000-01-01 00:00:00+00';
  v_item record;
  v_key record;
  v_full text;
  v_at timestamptz;
  v_window timestamptz;
  v_moved boolean;
  v_rounds integer;
  v_admitted bigint[] := '{}';
  v_execution geneva.step_executions;
begin
  perform geneva._limit_lock(array(
    select k.limit_key
    from unnest(p_execution_ids) as i (id)
    join geneva.step_executions e on e.id = i.id
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
    cross join lateral geneva._limit_keys(w, d, e.step_name) k
  ));

  for v_item in
    select e, w, d
    from unnest(p_execution_ids) as i (id)
    join geneva.step_executions e on e.id = i.id
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
    order by e.id
  loop
    -- concurrency: the first full key, but for a slot passed to it
    select k.limit_key into v_full
    from geneva._limit_keys(v_item.w, v_item.d, (v_item.e).step_name) k
    where k.concurrency is not null
      and not coalesce((v_item.e).limit_keys, '{}') @> array[k.limit_key]
      and (
        select count(*)
        from geneva.step_executions h
        where h.state in ('scheduled', 'in_progress')
          and h.limit_keys is not null
          and h.limit_keys @> array[k.limit_key]
      ) >= k.concurrency
    order by k.limit_key
    limit 1;
    if v_full is not null then
      update geneva.step_executions e
      set limit_wait_key = v_full,
        limit_keys = null,
        -- (a window reserved for it is left counted: limits err on the safe side)
        limit_window_at = null,
        updated_at = v_now
      where e.id = (v_item.e).id;
      perform geneva._limit_release((v_item.e).limit_keys);
      continue;
    end if;

    -- rate: the first window with room in every rate key, unless reserved
    v_at := v_now;
    if (v_item.e).limit_window_at is null then
      v_rounds := 0;
      loop
        v_moved := false;
        for v_key in
          select k.limit_key, k.rate, k.per
          from geneva._limit_keys(v_item.w, v_item.d, (v_item.e).step_name) k
          where k.rate is not null
        loop
          v_window := date_bin(v_key.per, v_at, v_origin);
          if coalesce((
            select lw.starts from geneva.limit_windows lw
            where lw.limit_key = v_key.limit_key and lw.window_start = v_window
          ), 0) >= v_key.rate then
            v_at := v_window + v_key.per;
            v_moved := true;
          end if;
        end loop;
        v_rounds := v_rounds + 1;
        exit when not v_moved or v_rounds >= 1000;
      end loop;
      insert into geneva.limit_windows as lw (limit_key, window_start, window_end, starts)
      select k.limit_key, date_bin(k.per, v_at, v_origin), date_bin(k.per, v_at, v_origin) + k.per, 1
      from geneva._limit_keys(v_item.w, v_item.d, (v_item.e).step_name) k
      where k.rate is not null
      on conflict (limit_key, window_start) do update set starts = lw.starts + 1;
      if v_at > v_now then
        update geneva.step_executions e
        set limit_window_at = v_at,
          scheduled_for = v_at,
          limit_keys = null,
          updated_at = v_now
        where e.id = (v_item.e).id
        returning e.* into v_execution;
        perform geneva._limit_release((v_item.e).limit_keys);
        perform geneva._ensure_job(v_item.w, v_execution);
        continue;
      end if;
    end if;

    -- it starts, holding a slot of each concurrency key
    update geneva.step_executions e
    set limit_keys = (
        select array_agg(k.limit_key order by k.limit_key)
        from geneva._limit_keys(v_item.w, v_item.d, (v_item.e).step_name) k
        where k.concurrency is not null
      ),
      limit_wait_key = null
    where e.id = (v_item.e).id;
    v_admitted := v_admitted || (v_item.e).id;
  end loop;
  return v_admitted;
end;
$$;
