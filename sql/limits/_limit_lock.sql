-- geneva._limit_lock: takes limit keys' locks, their rows of
-- geneva.limit_keys, in key order: FOR UPDATE (p_exclusive: to decide that a
-- key is full, or give its free slots to its waiters) or FOR KEY SHARE (to
-- free a slot while no one waits), held until the transaction ends. A key
-- with no row yet gets one first (an exclusive lock only: a key with a slot
-- to free has its row). Locks the transaction holds already are taken again
-- at no cost. See geneva.limit_keys for what the two modes order.
--
-- Called by: geneva._limit_admit (exclusive, the keys of the executions it
-- could not admit at once, and those of the slots its caller will free),
-- geneva._limit_release (the keys it frees or wakes), after the caller's
-- workflow and execution locks, once a transaction but for housekeeping,
-- which takes none it would wait for (geneva._recover_execution,
-- geneva.housekeep). The caller has set geneva.limiting (the only writers
-- of the limits' tables: sql/triggers/limits_guard.sql).
-- Locks: the keys' rows, as above; an insert of a key another transaction
-- is inserting waits for it.
-- Plans: as its callers (index lookups by key), whoever calls it first. It
-- has no `set search_path` of its own (every name in it is qualified, and
-- its callers run with the one search_path).
create or replace function geneva._limit_lock(p_keys text[], p_exclusive boolean)
returns void
language plpgsql
volatile
as $$
declare
  v_missing integer;
begin
  loop
    -- (each key's row locked in key order; those missing counted)
    if p_exclusive then
      select count(*) filter (where l.limit_key is null) into v_missing
      from (select distinct u.key from pg_catalog.unnest(p_keys) as u (key) where u.key is not null order by u.key) u
      left join lateral (
        select k.limit_key from geneva.limit_keys k where k.limit_key = u.key for update
      ) l on true;
    else
      select count(*) filter (where l.limit_key is null) into v_missing
      from (select distinct u.key from pg_catalog.unnest(p_keys) as u (key) where u.key is not null order by u.key) u
      left join lateral (
        select k.limit_key from geneva.limit_keys k where k.limit_key = u.key for key share
      ) l on true;
    end if;
    exit when v_missing = 0;
    -- a key with no row yet (or whose row housekeeping deleted meanwhile,
    -- unused): inserted, in key order, then all locked again (FOR UPDATE: a
    -- key with a slot to free has its row)
    insert into geneva.limit_keys (limit_key)
    select distinct u.key
    from pg_catalog.unnest(p_keys) as u (key)
    where u.key is not null and not exists (select from geneva.limit_keys k where k.limit_key = u.key)
    order by u.key
    on conflict do nothing;
    p_exclusive := true;
  end loop;
end;
$$;
