-- geneva._limit_wait_behind: the keys, of those given, that a new execution
-- of a step held to its type's concurrency only (geneva._limit_carries),
-- due now and awaiting no event, waits for at once, without a job, behind
-- the executions waiting already: the one rule of waiting behind. A key is
-- one when it has waiters and no free slot (every number up to its
-- concurrency held, as this statement sees them): so that a busy key's new
-- work does not fill River's queue ahead of other keys' (fairness) nor cost
-- a fetch and a claim to find the key full. Otherwise the execution gets its
-- job, and its claim decides (geneva._limit_admit).
--
-- Called by: geneva._insert_execution and geneva.create_workflows (a workflow
-- created, resumed, or a step scheduled by an operator), without the keys'
-- locks: the caller's transaction, an application's, may be long, and no
-- worker's end may wait for it. So a wake-up can be missed there: if every
-- slot of the key frees and every waiter ahead runs and ends before the
-- caller commits, no free sees the new waiter, and housekeeping's backstop
-- (geneva.housekeep offers every key with waiters its free slots) wakes it at
-- its next round. And by geneva._limit_next (a workflow's next step, after
-- its step's end), whose caller takes the key's lock before it commits and
-- gives the key's free slots to its waiters (geneva._limit_release): none
-- is missed.
-- Takes no locks.
-- Plans: no bitmap scans (enable_bitmapscan off; see geneva.limit_slots).
create or replace function geneva._limit_wait_behind(p_keys text[])
returns text[]
language plpgsql
stable
set search_path = pg_catalog, pg_temp
set enable_bitmapscan = off
as $$
begin
  return array(
    select k.key
    from (select distinct u.key from unnest(p_keys) as u (key) where u.key is not null) k
    cross join lateral (select geneva._limit_capacity(k.key) as capacity offset 0) c
    -- (the key as a range: see geneva._limit_release)
    where exists (
        select from geneva.step_executions x
        where x.limit_wait_key >= k.key and x.limit_wait_key <= k.key
      )
      and not exists (
        select from geneva.limit_slots s
        where s.limit_key = k.key and s.workflow_id is null and s.slot <= c.capacity
      )
      and (select count(*) from geneva.limit_slots s where s.limit_key = k.key and s.slot <= c.capacity) >= c.capacity
  );
end;
$$;
