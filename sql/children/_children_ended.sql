-- geneva._children_ended: what a canceled parent's end means to its
-- children: it cancels its ongoing children in the same transaction
-- (geneva._cancel_workflow, each logged: a ready or paused child at once, a
-- performing one at its step's end), and their ends cancel theirs in turn.
-- (A child's own end is counted on its parent's stripes by the trigger
-- itself: geneva._trg_workflows_ended.)
--
-- Called by: geneva._trg_workflows_ended (a trigger: every end counts,
-- whichever function ends the workflow), for a workflow canceled with
-- ongoing children; a workflow without family pays a test, not a call.
create or replace function geneva._children_ended(p_workflow geneva.workflows)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_child bigint;
begin
  for v_child in
    select c.id
    from geneva.workflows c
    where c.parent_id = p_workflow.id and c.finished_at is null and c.canceled_at is null
    order by c.id
  loop
    perform geneva._cancel_workflow(v_child, null);
  end loop;
end;
$$;
