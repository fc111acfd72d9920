-- geneva._await_name: the name of the event a step's "await" waits for: its
-- "event", or geneva:children for a join ("await": {"children": …}), whose
-- event geneva._children_join sends when the join's condition first holds
-- (geneva._check_event reserves names that start with geneva:).
--
-- Called by: geneva._schedule_step, geneva._advance_many (the await of a
-- step they schedule). Takes no locks. NULL for a step that awaits nothing.
create or replace function geneva._await_name(p_await jsonb)
returns text
language sql
immutable
set search_path = pg_catalog, pg_temp
as $$
  select case when p_await ? 'children' then 'geneva:children' else p_await ->> 'event' end;
$$;
