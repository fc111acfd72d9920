-- geneva._limit_full: the first (in key order) of concurrency keys that has
-- no free slot: as many slots held (geneva.limit_slots) as its concurrency
-- (geneva._limit_capacity) or more; NULL when every key has room. A slot is
-- taken only under that count too (geneva._limit_take), so a key full here
-- has no slot anyone can take.
--
-- Called by: geneva._limit_admit (must an execution that could not take a
-- slot wait?), holding the keys' locks (geneva._limit_lock), and
-- geneva._end_running (must the next step of a workflow wait?), without
-- them. Slots are taken, handed over and freed without a lock of the key:
-- before it answers that a key is full, it locks the key's rows (FOR KEY
-- SHARE, in key and slot order, the order geneva._limit_release locks them
-- in), so that a row it counted is freed only after the caller commits, by
-- a free that then sees the execution it left waiting (no wake-up is lost;
-- but for one race: see geneva._limit_admit). A row handed over meanwhile
-- (updated in place, not a key update) it counts as held, as it is. A row
-- being freed (locked FOR UPDATE by the free under way) it skips and does
-- not count; a claim (p_wait) first waits for the frees under way when it
-- looks (so that it counts the rows they leave, locked), an end does not
-- (it answers "room" rather than wait for a commit; the next step then
-- gets a job, and its claim decides).
-- Plans: no bitmap scans (enable_bitmapscan off; see geneva.limit_slots).
create or replace function geneva._limit_full(p_keys text[], p_wait boolean default true)
returns text
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
set enable_bitmapscan = off
as $$
declare
  v_full text;
begin
  select min(c.key) into v_full
  from (
    select u.key, coalesce(geneva._limit_capacity(u.key), 2147483647) as capacity
    from unnest(p_keys) as u (key)
    offset 0
  ) c
  where (select count(*) from geneva.limit_slots ls where ls.limit_key = c.key) >= c.capacity;
  if v_full is null then
    return null;
  end if;
  if p_wait then
    -- (waiting for the frees under way)
    perform
    from geneva.limit_slots ls
    where ls.limit_key = any (p_keys)
    order by ls.limit_key, ls.slot
    for key share;
  end if;
  -- (a new statement: it sees the frees committed while it waited; the
  -- rows locked FOR UPDATE by frees under way now are skipped, not counted)
  select min(c.key) into v_full
  from (
    select u.key, coalesce(geneva._limit_capacity(u.key), 2147483647) as capacity
    from unnest(p_keys) as u (key)
    offset 0
  ) c
  where (
    select count(*)
    from (
      select from geneva.limit_slots ls
      where ls.limit_key = c.key
      order by ls.limit_key, ls.slot
      for key share skip locked
    ) l
  ) >= c.capacity;
  return v_full;
end;
$$;
