-- geneva._limit_numbers: the numbers a claim tries for p_wanted slots of a
-- concurrency key that p_held slots hold now, at most as many as it wants
-- and the key has room for under p_capacity, in order (none: empty): each free as this
-- statement sees it (no row of geneva.limit_slots holds it) and not being
-- taken by another transaction, whose transaction-level advisory lock it
-- tries and takes (pg_try_advisory_xact_lock, on the key's hash and the
-- number; never waited for). With p_random (a large concurrency, far from
-- full), numbers drawn at random from 1 to p_capacity, four a slot wanted;
-- else every number in order from 1, to as far as the held and twice the
-- wanted reach, and 8 more. The caller inserts the slots under them (on
-- conflict do nothing: a row inserted meanwhile under a number).
--
-- Called by: geneva._limit_take (each round of a key) and
-- geneva._limit_admit (a claim far from its key's bound, in its insert).
-- Plans: as its callers (no bitmap scans: see geneva.limit_slots), whoever
-- calls it first. It has no `set search_path` of its own (every name in it
-- is qualified, and its callers run with the one search_path), since a
-- function's own settings cost a save and a restore at every call.
create or replace function geneva._limit_numbers(
  p_key text,
  p_capacity integer,
  p_held integer,
  p_wanted integer,
  p_random boolean
)
returns integer[]
language plpgsql
volatile
as $$
begin
  return array(
    select c.n
    from (
      select f.n
      from (
        select distinct r.n
        from (
          select 1 + pg_catalog.floor(pg_catalog.random() * p_capacity)::integer as n
          from pg_catalog.generate_series(1, 4 * p_wanted)
          where p_random
          union all
          select g.n
          from pg_catalog.generate_series(1, least(p_capacity, p_held + 2 * p_wanted + 8)) as g (n)
          where not p_random
        ) r
        where not exists (
          select from geneva.limit_slots ls where ls.limit_key = p_key and ls.slot = r.n
        )
        offset 0
      ) f
      -- (tried only until enough are taken: the limit stops the scan)
      where pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtext(p_key), f.n)
      limit least(p_wanted, p_capacity - p_held)
    ) c
    order by c.n
  );
end;
$$;
