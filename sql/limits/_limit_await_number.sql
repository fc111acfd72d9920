-- geneva._limit_await_number: waits, for at most 50 milliseconds, for the
-- transaction taking the key's first free number (one no slot holds, as
-- this statement sees them, under the key's concurrency) to commit: its
-- advisory lock (geneva._limit_take) is taken, and held until this
-- transaction ends, or not when the wait times out. Nothing when the key has
-- no free number.
--
-- Called by: geneva._limit_admit, when a claim could take no slot of a key
-- that geneva._limit_full says has room: its free numbers are being taken
-- by claims in flight, whose slots it must see (and lock) before it may
-- decide to wait for the key. The wait is bounded because the claim in
-- flight may be waiting for a lock the caller holds (a key's lock, or a
-- number of another key); the caller then tries once more and, failing,
-- waits for the key (the race geneva._limit_admit's header describes).
-- Plans: no bitmap scans (enable_bitmapscan off; see geneva.limit_slots).
create or replace function geneva._limit_await_number(p_key text)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
set enable_bitmapscan = off
as $$
declare
  v_capacity integer := coalesce(geneva._limit_capacity(p_key), 2147483647);
  v_number integer;
  v_timeout text := pg_catalog.current_setting('lock_timeout');
begin
  select g.n into v_number
  from generate_series(
    1,
    least(v_capacity, (select count(*) from geneva.limit_slots ls where ls.limit_key = p_key)::integer + 1)
  ) as g (n)
  where not exists (select from geneva.limit_slots ls where ls.limit_key = p_key and ls.slot = g.n)
  order by g.n
  limit 1;
  if v_number is null then
    return;
  end if;
  perform pg_catalog.set_config('lock_timeout', '50ms', true);
  begin
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext(p_key), v_number);
  exception when lock_not_available then
    null;
  end;
  perform pg_catalog.set_config('lock_timeout', v_timeout, true);
end;
$$;
