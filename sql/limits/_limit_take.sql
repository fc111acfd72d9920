-- geneva._limit_take: takes a slot of a concurrency key for each workflow
-- of the pairs it is given (p_keys and p_workflow_ids, element by element;
-- one pair a workflow and key), as many as it can without waiting for
-- anyone, and returns the pairs it took. A slot is a number from 1 to the
-- key's concurrency now (geneva._limit_capacity) that no slot of the key
-- holds (geneva.limit_slots, unique per key): the unique index, not a lock,
-- keeps the key within its bound. No more are taken than the key's slots
-- leave under its concurrency, as this transaction sees them (a
-- concurrency lowered below the slots held admits none until they drain). A number another transaction is taking
-- is skipped, not waited for: each number is claimed with a
-- transaction-level advisory lock tried first (pg_try_advisory_xact_lock,
-- on the key's hash and the number), so two claims of a key that has room
-- never take turns until they commit, and one that finds a row inserted
-- meanwhile under the number does nothing (on conflict do nothing). A key
-- with a large concurrency tries numbers drawn at random from its range
-- (most are free while it is far from full), one with a small one, or a
-- second round, its free numbers in order. A pair not returned found no
-- free number it could take: the key is full, or its last free numbers are
-- being taken; the caller decides what it waits for (geneva._limit_full).
--
-- Called by: geneva._limit_admit (a claim's slots) and
-- geneva._limit_release (slots for the waiters it wakes that no freed slot
-- was passed to). The caller has set geneva.limiting (the only writers of
-- the limits' tables: sql/guards/limits_guard.sql). Advisory locks in
-- the two-key form, on (hashtext(key), number).
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
  v_pending bigint[];
  v_numbers integer[];
  v_taken bigint[];
  v_round integer;
  v_room integer;
begin
  -- key by key, in key order (the numbers of a key taken in their order:
  -- see the insert), three rounds at most
  for v_key in
    select u.key, coalesce(geneva._limit_capacity(u.key), 2147483647) as capacity,
      array_agg(u.workflow_id order by u.workflow_id) as workflow_ids
    from unnest(p_keys, p_workflow_ids) as u (key, workflow_id)
    where u.key is not null
    group by u.key
    -- (not a key with no room)
    having (select count(*) from geneva.limit_slots ls where ls.limit_key = u.key)
      < coalesce(geneva._limit_capacity(u.key), 2147483647)
    order by u.key
  loop
    v_pending := v_key.workflow_ids;
    for v_round in 1 .. 3 loop
      v_room := v_key.capacity
        - (select count(*) from geneva.limit_slots ls where ls.limit_key = v_key.key)::integer;
      exit when v_room <= 0;
      -- the numbers to try: at random from the range (a large concurrency,
      -- the first two rounds), else every free one in order
      -- (geneva._limit_numbers)
      v_numbers := geneva._limit_numbers(
        v_key.key, v_key.capacity, v_key.capacity - v_room, cardinality(v_pending),
        v_key.capacity > 64 and v_round < 3
      );
      continue when cardinality(v_numbers) = 0;
      with taken as (
        insert into geneva.limit_slots as ls (limit_key, workflow_id, bound, slot)
        select v_key.key, p.workflow_id, v_key.capacity, p.slot
        from unnest(v_pending[1:cardinality(v_numbers)], v_numbers) as p (workflow_id, slot)
        order by p.slot
        on conflict do nothing
        returning ls.workflow_id
      )
      select array_agg(t.workflow_id) into v_taken from taken t;
      if v_taken is not null then
        return query select v_key.key, t.id from unnest(v_taken) as t (id);
        v_pending := array(select p.id from unnest(v_pending) as p (id) where not p.id = any (v_taken));
      end if;
      exit when cardinality(v_pending) = 0;
    end loop;
  end loop;
end;
$$;
