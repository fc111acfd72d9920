-- geneva._child_ended: the rest of a child's end on its parent, after
-- geneva._trg_workflows_ended has tried to count it on a stripe of the
-- parent's (geneva.children_stripes) that no other transaction holds: when
-- every stripe that still counts some was another's (p_counted false), it
-- waits for the first of them and counts the end there (one brought to 0
-- meanwhile is passed over). Only an end that may make the parent's join
-- due goes on to take the parent's row lock: one that brought its stripe to
-- 0, or any end of a parent whose type has a join that waits for fewer than
-- all ("any", N: the stripe's partial_join, kept from the definition, not
-- read from the join's execution: one scheduled by a transaction not
-- committed yet is not seen here, and its claim would not see this end).
-- Under the lock, in statements of their own (which see every end committed
-- while this one waited), it writes the parent's children_ended as the
-- stripes say, deletes the parent's stripes once no child is ongoing, and
-- asks whether the join is due (geneva._children_join).
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
-- Called by: geneva._trg_workflows_ended (a child ended), when its stripe
-- came to 0, its parent's join may wait for fewer than all, or it found no
-- stripe free (p_counted false).
-- Locks: a stripe, then the parent's row (after the child's row, which its
-- caller holds: see docs/children.md on lock order).
drop function if exists geneva._child_ended(bigint, bigint);

create or replace function geneva._child_ended(p_parent_id bigint, p_counted boolean)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_left integer;
  v_partial boolean;
  v_ongoing integer;
  v_parent geneva.workflows;
begin
  if not p_counted then
    update geneva.children_stripes s
    set ongoing = s.ongoing - 1
    where s.parent_id = p_parent_id
      and s.stripe = (
        select f.stripe
        from geneva.children_stripes f
        where f.parent_id = p_parent_id and f.ongoing > 0
        order by f.stripe
        limit 1
        for update
      )
    returning s.ongoing, s.partial_join into v_left, v_partial;
    if not found or v_left > 0 and not v_partial then
      return;
    end if;
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
