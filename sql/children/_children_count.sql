-- geneva._children_count: counts children created (p_created) and ended
-- (p_ended) on their parent's row, under its row lock, then asks whether
-- the parent's join is due now (geneva._children_join). The lock is what
-- serialises the ends of a parent's children: of two that end at the same
-- instant on different connections, the second waits here for the first to
-- commit, then counts on its count.
--
-- Called by: geneva.create_workflows (children created, with those created
-- ended: a type without steps), geneva._children_ended (a child ended).
-- Locks: the parent's row (after the child's, which its caller holds: see
-- docs/children.md on lock order).
-- Returns the parent's row after the change (none when it no longer exists).
create or replace function geneva._children_count(p_parent_id bigint, p_created integer, p_ended integer)
returns geneva.workflows
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_parent geneva.workflows;
begin
  update geneva.workflows w
  set children = w.children + p_created,
    children_ended = w.children_ended + p_ended
  where w.id = p_parent_id
  returning w.* into v_parent;
  if found then
    perform geneva._children_join(v_parent);
  end if;
  return v_parent;
end;
$$;
