-- geneva._children_ongoing: how many of a parent's children have not ended,
-- from their stripes (geneva.children_stripes); 0 when it has none. What a
-- statement's snapshot sees: an end not committed yet counts as ongoing.
--
-- Called by: geneva._children_count, geneva._child_ended (under the
-- parent's row lock, in a statement of their own, so that the ends
-- committed while they waited for it are seen), geneva._children_ended_now.
-- Takes no locks.
create or replace function geneva._children_ongoing(p_parent_id bigint)
returns integer
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
  select coalesce(sum(s.ongoing), 0)::integer
  from geneva.children_stripes s
  where s.parent_id = p_parent_id;
$$;
