-- geneva._child_ended: counts a child's end on its parent without waiting
-- for its siblings' ends: one taken from a stripe of the parent's
-- (geneva.children_stripes), the first that still counts ongoing children
-- and that no other transaction holds (for update skip locked), so that
-- ends on different connections take different stripes; only when every such
-- stripe is held does it wait, for the first. Only an end that may make
-- the parent's join due takes the parent's row lock: one that brings its
-- stripe to 0, or any end of a parent whose type has a join that waits for
-- fewer than all ("any", N). Under the lock, in statements of their own
-- (which see every end committed while this one waited), it writes the
-- parent's children_ended as the stripes say, deletes the parent's stripes
-- once no child is ongoing, and asks whether the join is due
-- (geneva._children_join).
--
-- Exactly once: every stripe's last end takes the parent's lock, and the
-- last to take it sees the others' ends committed (each held the lock to
-- its commit; the ends before a stripe's last on it committed before its
-- row was theirs), so it finds every stripe at 0 when all are; an earlier
-- one that finds the join due sends its event, and the join, once sent
-- it, is not picked again. A creation takes the parent's row lock before
-- it counts its children (geneva._children_count), so an end that takes
-- it after sees them, and one before it is seen by the creation's own
-- question.
--
-- Called by: geneva._children_ended (a child ended).
-- Locks: a stripe, then the parent's row (after the child's row, which its
-- caller holds: see docs/children.md on lock order).
create or replace function geneva._child_ended(p_parent_id bigint, p_child_id bigint)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_stripe integer;
  v_left integer;
  v_ongoing integer;
  v_parent geneva.workflows;
begin
  select s.stripe into v_stripe
  from geneva.children_stripes s
  where s.parent_id = p_parent_id and s.ongoing > 0
  order by s.stripe
  limit 1
  for update skip locked;
  if not found then
    -- every stripe that counts some is another transaction's: the first
    -- (one brought to 0 meanwhile is passed over)
    select s.stripe into v_stripe
    from geneva.children_stripes s
    where s.parent_id = p_parent_id and s.ongoing > 0
    order by s.stripe
    limit 1
    for update;
  end if;
  if v_stripe is null then
    return;
  end if;
  update geneva.children_stripes s
  set ongoing = s.ongoing - 1
  where s.parent_id = p_parent_id and s.stripe = v_stripe
  returning s.ongoing into v_left;

  -- not its stripe's last child: the join waits for more, unless the
  -- parent's type has a join that waits for fewer than all (read from its
  -- definition, not from the join's execution: one scheduled by a
  -- transaction not committed yet is not seen here, and its claim would
  -- not see this end)
  if v_left > 0 and not exists (
    select from geneva.workflows w
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
    cross join lateral jsonb_array_elements(d.definition -> 'steps') st (step)
    where w.id = p_parent_id
      and st.step -> 'await' ? 'children'
      and st.step -> 'await' -> 'children' <> '"all"'::jsonb
  ) then
    return;
  end if;

  perform from geneva.workflows w where w.id = p_parent_id for no key update;
  v_ongoing := geneva._children_ongoing(p_parent_id);
  if v_ongoing = 0 then
    delete from geneva.children_stripes s where s.parent_id = p_parent_id;
  end if;
  update geneva.workflows w
  set children_ended = w.children - v_ongoing
  where w.id = p_parent_id
  returning w.* into v_parent;
  if found then
    perform geneva._children_join(v_parent);
  end if;
end;
$$;
