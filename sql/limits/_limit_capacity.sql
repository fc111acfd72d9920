-- geneva._limit_capacity: how many executions may hold a slot of a limit key
-- at once (its concurrency), from the definition or the named limit as they
-- are now; 2147483647 when the key has none (any more): "no bound", written
-- here only.
--
-- Called by: geneva._limit_admit, geneva._limit_take, geneva._limit_release
-- and geneva._limit_wait_behind (geneva.limit_usage has the same lookups
-- inline, NULL for none: its readers may not execute a private helper; and
-- geneva._limit_next reads a type's concurrency from its definition, which
-- it has). Takes no locks.
-- PL/pgSQL, not SQL: an SQL function with a subquery is never inlined, and
-- one that is not inlined is parsed and planned again at every call (37 µs
-- here, against a few for a PL/pgSQL function's cached plans).
-- It has no `set search_path` of its own (every name in it is qualified,
-- and its callers run with the one search_path), since a function's own
-- settings cost a save and a restore at every call.
create or replace function geneva._limit_capacity(p_key text)
returns integer
language plpgsql
stable
as $$
declare
  v_key jsonb := p_key::jsonb;
  v_capacity integer;
begin
  if v_key ->> 0 = 'concurrency' then
    v_capacity := (
      select (d.definition -> 'concurrency' ->> 'limit')::integer
      from geneva.workflow_definitions d
      where d.workflow_type = v_key ->> 1
    );
  elsif v_key ->> 0 = 'limit' then
    v_capacity := (select l.concurrency from geneva.limits l where l.name = v_key ->> 1);
  end if;
  return coalesce(v_capacity, 2147483647);
end;
$$;
