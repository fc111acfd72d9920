-- geneva._workflow_now: a workflow's row as its readers see it now: its
-- children_ended counted as the stripes say now (geneva._children_ended_now),
-- not as last written, which may lag while some children are ongoing.
--
-- Called by: the verbs that return a workflow's row (geneva.cancel_workflow,
-- pause_workflow, resume_workflow, skip_step, schedule_step), after their
-- change. Takes no locks.
create or replace function geneva._workflow_now(p_workflow geneva.workflows)
returns geneva.workflows
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
begin
  p_workflow.children_ended := geneva._children_ended_now(p_workflow.id, p_workflow.children, p_workflow.children_ended);
  return p_workflow;
end;
$$;
