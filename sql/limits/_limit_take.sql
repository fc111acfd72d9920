-- geneva._limit_take: gives each pair it is given (p_keys and p_workflow_ids,
-- element by element, in the order given; one pair a workflow and key) a
-- slot of its concurrency key, while the key has room: fewer slots held than
-- its concurrency (geneva._limit_capacity), as this statement sees them.
-- A slot is a free row of the key numbered within its concurrency, the
-- lowest first (one another transaction is taking is skipped, not waited
-- for), or else a new row under the lowest number the key does not have
-- (with some more, free, for the claims after).
-- Returns the pairs given one; the others found the key full.
--
-- Called by: geneva._limit_admit (the executions it could not admit at
-- once) and geneva._limit_release (a wake: waiters given the key's free
-- slots), holding the keys' locks FOR UPDATE (geneva._limit_lock): no one
-- else adds a row meanwhile, and every free committed before is seen.
-- The caller has set geneva.limiting (sql/guards/limits_guard.sql).
-- Plans: no bitmap scans (enable_bitmapscan off; see geneva.limit_slots).
create or replace function geneva._limit_take(p_keys text[], p_workflow_ids bigint[])
returns table (limit_key text, workflow_id bigint)
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
set enable_bitmapscan = off
as $$
#variable_conflict use_column
declare
  v_key record;
  v_room integer;
  v_workflows bigint[];
  v_free integer[];
  v_new integer[];
  v_rows integer;
begin
  for v_key in
    select u.key, geneva._limit_capacity(u.key) as capacity,
      array_agg(u.workflow_id order by u.ord) as workflow_ids
    from unnest(p_keys, p_workflow_ids) with ordinality as u (key, workflow_id, ord)
    where u.key is not null
    group by u.key
    order by u.key
  loop
    v_room := v_key.capacity - (
      select count(*) from geneva.limit_slots s where s.limit_key = v_key.key and s.workflow_id is not null
    )::integer;
    continue when v_room <= 0;
    v_workflows := v_key.workflow_ids[1:v_room];
    -- its free rows, lowest first, then new numbers, the lowest it lacks
    v_free := array(
      select s.slot
      from geneva.limit_slots s
      where s.limit_key = v_key.key and s.workflow_id is null and s.slot <= v_key.capacity
      order by s.slot
      limit cardinality(v_workflows)
      for update of s skip locked
    );
    if cardinality(v_free) < cardinality(v_workflows) then
      -- (and as many again as the key has rows, 8 to 64, free: so that the
      -- next claims find free rows and need not take the key's lock)
      v_rows := (select count(*) from geneva.limit_slots s where s.limit_key = v_key.key)::integer;
      v_new := array(
        select g.n
        from generate_series(
          1, least(v_key.capacity, v_rows + cardinality(v_workflows) + least(greatest(v_rows, 8), 64))
        ) as g (n)
        where not exists (select from geneva.limit_slots s where s.limit_key = v_key.key and s.slot = g.n)
        order by g.n
        limit cardinality(v_workflows) - cardinality(v_free) + least(greatest(v_rows, 8), 64)
      );
      insert into geneva.limit_slots (limit_key, slot, workflow_id)
      select v_key.key, n.slot, v_workflows[(cardinality(v_free) + n.ord)::integer]
      from unnest(v_new) with ordinality as n (slot, ord);
    end if;
    update geneva.limit_slots s
    set workflow_id = v_workflows[f.ord::integer]
    from unnest(v_free) with ordinality as f (slot, ord)
    where s.limit_key = v_key.key and s.slot = f.slot;
    return query
    select v_key.key, w.id
    from unnest(v_workflows[1:cardinality(v_free) + coalesce(cardinality(v_new), 0)]) as w (id)
    where w.id is not null;
    v_new := null;
  end loop;
end;
$$;
