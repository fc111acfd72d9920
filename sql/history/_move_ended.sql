-- geneva._move_ended: housekeeping's move (docs/history.md): up to
-- p_batch_size whole trees of ended workflows, oldest end first, out of the
-- live tables into history (geneva._move_to_history), in the caller's
-- transaction.
--
-- A tree is a workflow whose parent is not live (a root: parent_id NULL;
-- or a child whose parent is gone, deleted before history was built) with
-- all its descendants (parent_id, recursively). It moves whole or not at
-- all, and only when every member has ended (a parent with ongoing children
-- stays, and its ended children with it: their parent's child keys and
-- children counts are still read) and ended (transitioned_at) before
-- p_before (now - move_after, or now - retention when that is shorter: a
-- workflow past its retention leaves the live tables whatever move_after
-- says, and retention then drops its partition).
--
-- Locks: every member's row (for update, skip locked): a tree with a member
-- another transaction holds (an operator's verb, a retry reading it) stays
-- for a later round; the trees that stay keep the locks taken on them until
-- the caller's transaction ends. Reads the ended workflows by
-- workflows_ended_transitioned_at and each tree by workflows_parent_id.
-- Called by: geneva.housekeep.
-- Returns the workflows moved, and whether p_batch_size trees were (another
-- round may find more).
create or replace function geneva._move_ended(p_before timestamptz, p_batch_size integer)
returns table (moved integer, more boolean)
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_top bigint;
  v_tree bigint[];
  v_ids bigint[] := '{}';
  v_trees integer := 0;
  v_moved bigint[];
begin
  for v_top in
    select w.id
    from geneva.workflows w
    where (w.finished_at is not null or w.canceled_at is not null)
      and w.transitioned_at < p_before
      -- (a probe of the parent's id, not a hashed scan of every workflow)
      and (w.parent_id is null or (select p.id from geneva.workflows p where p.id = w.parent_id) is null)
    order by w.transitioned_at
  loop
    -- the tree: the top and its descendants, every one ended before p_before
    with recursive tree as (
      select w.id, w.finished_at is null and w.canceled_at is null as ongoing, w.transitioned_at
      from geneva.workflows w
      where w.id = v_top
      union all
      select c.id, c.finished_at is null and c.canceled_at is null, c.transitioned_at
      from tree t
      join geneva.workflows c on c.parent_id = t.id
    )
    select array_agg(t.id order by t.id) into v_tree
    from tree t
    having not bool_or(t.ongoing) and max(t.transitioned_at) < p_before;
    continue when v_tree is null;

    -- whole or not at all: every member locked now
    continue when (
      select count(*)
      from (select from geneva.workflows w where w.id = any(v_tree) order by w.id for update skip locked) l
    ) < cardinality(v_tree);

    v_ids := v_ids || v_tree;
    v_trees := v_trees + 1;
    exit when v_trees >= p_batch_size;
  end loop;

  if v_trees = 0 then
    return query select 0, false;
    return;
  end if;
  v_moved := geneva._move_to_history(v_ids);
  return query select cardinality(v_moved), v_trees >= p_batch_size;
end;
$$;
