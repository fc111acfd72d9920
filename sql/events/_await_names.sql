-- geneva._await_names: every name an await of any of several events waits
-- for ("await": {"event": ["approved", "rejected"], …}), in the
-- definition's order; NULL for an await of one name (a list of one
-- included: geneva._await_name is its name) or of none.
--
-- Called by: geneva._insert_execution, geneva._advance_many (an execution's
-- await_names), geneva._await_after. Takes no locks.
-- Like geneva._await_name it has no `set search_path`, so that the planner
-- inlines it; it names only pg_catalog's functions and operators.
create or replace function geneva._await_names(p_await jsonb)
returns text[]
language sql
immutable
parallel safe
as $$
  select case
    when pg_catalog.jsonb_typeof(p_await operator(pg_catalog.->) 'event') operator(pg_catalog.=) 'array'
      and pg_catalog.jsonb_array_length(p_await operator(pg_catalog.->) 'event') operator(pg_catalog.>) 1
      then array(select pg_catalog.jsonb_array_elements_text(p_await operator(pg_catalog.->) 'event'))
  end;
$$;
