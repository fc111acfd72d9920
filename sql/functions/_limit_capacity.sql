-- geneva._limit_capacity: how many executions may hold a slot of a limit key
-- at once (its concurrency), from the definition or the named limit as they
-- are now; NULL when the key has none (any more).
--
-- Called by: geneva._limit_release (geneva.limit_usage has the same
-- expression inline: its readers may not execute a private helper). Takes
-- no locks.
create or replace function geneva._limit_capacity(p_key text)
returns integer
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
  select case k ->> 0
    when 'concurrency' then (
      select (d.definition -> 'concurrency' ->> 'limit')::integer
      from geneva.workflow_definitions d
      where d.workflow_type = k ->> 1
    )
    when 'limit' then (select l.concurrency from geneva.limits l where l.name = k ->> 1)
  end
  from (select p_key::jsonb as k) x
$$;
