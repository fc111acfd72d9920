-- geneva._limit_lock: takes the transaction-level advisory locks of limit
-- keys, in one order (by key), so that the claims that count a rate key's
-- starts in a window take turns, and so do the claims of a concurrency key
-- that could not take a slot at once (a key near its bound), and two
-- batches never wait for each other's keys in opposite orders. Locks the transaction holds
-- already are taken again at no cost. (A claim that takes a slot at once
-- takes no lock: a slot's number is unique, geneva._limit_take.)
--
-- Called by: geneva._limit_admit (rate keys first, then concurrency keys),
-- after the caller's workflow and execution locks. Advisory locks in class
-- 1195725890 (the first argument of the two-key form); the only other
-- two-key locks, a slot number's (geneva._limit_take: a key's hash, the
-- number), meet one of these only when a key's hash is that class and the
-- number another key's hash: then one waits for the other's commit.
create or replace function geneva._limit_lock(p_keys text[])
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_key text;
begin
  for v_key in select distinct u.key from unnest(p_keys) as u (key) where u.key is not null order by u.key loop
    perform pg_catalog.pg_advisory_xact_lock(1195725890, pg_catalog.hashtext(v_key));
  end loop;
end;
$$;
