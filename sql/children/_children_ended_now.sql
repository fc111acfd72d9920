-- geneva._children_ended_now: how many of a workflow's children have ended
-- (finished or canceled), now. The row's children_ended is written only
-- under the parent's row lock (geneva._children_count, geneva._child_ended):
-- exact when every child has ended, never over the count otherwise; while
-- some have not, the count is its children less those its stripes hold
-- ongoing (geneva._children_ongoing).
--
-- Called by: the readers of a workflow's counts (geneva.get_workflow,
-- geneva.list_workflows; the view geneva.workflow_list reads the same
-- expression inline, its readers not granted this function),
-- geneva._children_join. Takes no locks.
create or replace function geneva._children_ended_now(p_workflow_id bigint, p_children integer, p_children_ended integer)
returns integer
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
  select case
    when p_children = p_children_ended then p_children_ended
    else p_children - geneva._children_ongoing(p_workflow_id)
  end;
$$;
