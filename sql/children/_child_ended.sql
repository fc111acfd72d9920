-- geneva._child_ended: counts a child's end on its parent without waiting
-- for its siblings' ends: one on the ended row of the child's stripe
-- (geneva.children_stripes, hashint8(its id) & 15), under that row's lock
-- alone. Only an end that may make the parent's join due takes the
-- parent's row lock: one that brings its stripe's ended count to its
-- created count (the stripe's last child, as far as this statement sees),
-- or any end of a parent whose type has a join that waits for fewer than
-- all ("any", N). Under the lock, in statements of their own (which see every
-- end committed while this one waited), it writes the parent's
-- children_ended as the stripes say, deletes the parent's stripes once no
-- child is ongoing, and asks whether the join is due (geneva._children_join).
--
-- Exactly once: the stripes' last ends each take the parent's lock in turn;
-- the last to take it sees the others' ends committed (each held the lock
-- to its commit), so it finds every stripe ended when all are; an earlier
-- one that finds the join due sends its event, and the join, once sent it,
-- is not picked again. Two last children of one stripe are ordered by the
-- stripe's row. A creation takes the parent's row lock before it counts
-- its children (geneva._children_count), so an end that takes it after
-- sees them, and one before it is seen by the creation's own question.
--
-- Called by: geneva._children_ended (a child ended).
-- Locks: the stripe's ended row, then the parent's row (after the child's
-- row, which its caller holds: see docs/children.md on lock order).
create or replace function geneva._child_ended(p_parent_id bigint, p_child_id bigint)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_stripe smallint := (hashint8(p_child_id) & 15)::smallint;
  v_ended integer;
  v_ongoing integer;
  v_parent geneva.workflows;
begin
  insert into geneva.children_stripes as s (parent_id, ended, stripe, n)
  values (p_parent_id, true, v_stripe, 1)
  on conflict (parent_id, ended, stripe) do update
  set n = s.n + 1
  returning s.n into v_ended;

  -- not its stripe's last child: the join waits for more, unless the
  -- parent's type has a join that waits for fewer than all (read from its
  -- definition, not from the join's execution: one scheduled by a
  -- transaction not committed yet is not seen here, and its claim would
  -- not see this end)
  if v_ended < (
    select s.n from geneva.children_stripes s
    where s.parent_id = p_parent_id and not s.ended and s.stripe = v_stripe
  ) and not exists (
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
