-- geneva._await_name: the name of the event a step's "await" waits for: its
-- "event" (the first, for a list: geneva._await_names has them all), or
-- geneva:children for a join ("await": {"children": …}), whose event
-- geneva._children_join sends when the join's condition first holds
-- (geneva._check_event reserves names that start with geneva:).
--
-- Called by: geneva._insert_execution, geneva._advance_many (the await of a
-- step they schedule), geneva._await_after. Takes no locks. NULL for a step
-- that awaits nothing.
-- Like geneva.now() it has no `set search_path`, so that the planner inlines
-- it into _advance_many's statement (a call there would be one a step); it
-- names only pg_catalog's jsonb functions and operators.
create or replace function geneva._await_name(p_await jsonb)
returns text
language sql
immutable
parallel safe
as $$
  select case
    when p_await operator(pg_catalog.?) 'children' then 'geneva:children'
    when pg_catalog.jsonb_typeof(p_await operator(pg_catalog.->) 'event') operator(pg_catalog.=) 'array'
      then p_await operator(pg_catalog.->) 'event' operator(pg_catalog.->>) 0
    else p_await operator(pg_catalog.->>) 'event'
  end;
$$;
