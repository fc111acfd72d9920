-- geneva._children_count: counts the children a creation made on their
-- parent: those created ongoing on their stripes' created rows
-- (geneva.children_stripes: a child's stripe is hashint8(its id) & 15, one
-- row a stripe, whatever the list's length), and all of them on the
-- parent's row (children; children_ended, as the stripes say now), then
-- asks whether the parent's join is due now (geneva._children_join).
-- A creation writes only the created rows, which only creations write,
-- each under the parent's row lock: it never waits for a child's end (the
-- ends write the ended rows: geneva._child_ended).
--
-- Called by: geneva.create_workflows (p_created: the ids created;
-- p_ended: they were created ended, a type without steps), which holds the
-- parent's row lock.
-- Locks: the parent's stripes' created rows (after the parent's row).
-- Returns the parent's row after the change (none when it no longer exists).
-- (the signature before the children's stripes: dropped)
drop function if exists geneva._children_count(bigint, integer, integer);

create or replace function geneva._children_count(p_parent_id bigint, p_created bigint[], p_ended boolean)
returns geneva.workflows
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_parent geneva.workflows;
begin
  if not p_ended then
    insert into geneva.children_stripes as s (parent_id, ended, stripe, n)
    select p_parent_id, false, (hashint8(c.id) & 15)::smallint, count(*)
    from unnest(p_created) c (id)
    group by 3
    order by 3
    on conflict (parent_id, ended, stripe) do update
    set n = s.n + excluded.n;
  end if;
  update geneva.workflows w
  set children = w.children + cardinality(p_created),
    children_ended = w.children + cardinality(p_created) - geneva._children_ongoing(p_parent_id)
  where w.id = p_parent_id
  returning w.* into v_parent;
  if found then
    perform geneva._children_join(v_parent);
  end if;
  return v_parent;
end;
$$;
