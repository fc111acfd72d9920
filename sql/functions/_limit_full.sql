-- geneva._limit_full: the first (in key order) of concurrency keys that has
-- no free slot: as many slots held (geneva.limit_slots) as its concurrency
-- (geneva._limit_capacity) or more; NULL when every key has room.
--
-- Called by: geneva._limit_admit (may an execution start?) and
-- geneva._end_running (must the next step of a workflow wait?), with the
-- keys' advisory locks (geneva._limit_lock), so that no one else adds a slot
-- meanwhile. Slots are freed without that lock (geneva._limit_release): before
-- it answers that a key is full, it locks the key's rows (FOR KEY SHARE, in
-- key and workflow order, the order geneva._limit_release locks them in),
-- waiting for the frees under way to commit, and counts again. A free that
-- starts after that waits for the caller to commit, and then sees the
-- execution it left waiting (no wake-up is lost).
create or replace function geneva._limit_full(p_keys text[])
returns text
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_full text;
begin
  select min(u.key) into v_full
  from unnest(p_keys) as u (key)
  where (select count(*) from geneva.limit_slots ls where ls.limit_key = u.key)
    >= coalesce(geneva._limit_capacity(u.key), 2147483647);
  if v_full is null then
    return null;
  end if;
  perform
  from geneva.limit_slots ls
  where ls.limit_key = any (p_keys)
  order by ls.limit_key, ls.workflow_id
  for key share;
  -- (a new statement: it sees the frees committed while it waited)
  select min(u.key) into v_full
  from unnest(p_keys) as u (key)
  where (select count(*) from geneva.limit_slots ls where ls.limit_key = u.key)
    >= coalesce(geneva._limit_capacity(u.key), 2147483647);
  return v_full;
end;
$$;
