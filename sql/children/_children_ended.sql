-- geneva._children_ended: what a workflow's end means to its family. A
-- child that ends (finished or canceled; a paused one has not) is counted on
-- its parent's stripes (geneva._child_ended), whose join may be due now; a parent
-- that is canceled cancels its ongoing children in the same transaction
-- (geneva._cancel_workflow, each logged: a ready or paused child at once, a
-- performing one at its step's end), and their ends cancel theirs in turn.
--
-- Called by: geneva._trg_workflows_ended (a trigger: every end counts,
-- whichever function ends the workflow), for a workflow that ends with a
-- parent, or is canceled with ongoing children; a workflow without family
-- pays a test, not a call.
create or replace function geneva._children_ended(p_workflow geneva.workflows)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_child bigint;
begin
  if p_workflow.canceled_at is not null and p_workflow.children > p_workflow.children_ended then
    for v_child in
      select c.id
      from geneva.workflows c
      where c.parent_id = p_workflow.id and c.finished_at is null and c.canceled_at is null
      order by c.id
    loop
      perform geneva._cancel_workflow(v_child, null);
    end loop;
  end if;
  if p_workflow.parent_id is not null then
    perform geneva._child_ended(p_workflow.parent_id, p_workflow.id);
  end if;
end;
$$;
