-- geneva.final_step_at: the earliest instant a workflow's last step can
-- start (geneva._final_step_at, as geneva.workflow_list's final_step_at):
-- exact when the steps' "after" offsets decide, a lower bound when waits,
-- awaits, limits or failures may hold a step longer; NULL for an ended
-- workflow (one moved into history too: docs/history.md).
--
-- Called by: applications, operators, goclient.GetWorkflow and
-- ListWorkflows (`geneva show`, the dashboard's workflow page), geneva.workflow_list. For the
-- roles that read workflows (get_workflow's), workers included, who may not
-- read geneva.workflow_list. Takes no locks.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow.
create or replace function geneva.final_step_at(p_workflow_id bigint)
returns timestamptz
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow geneva.workflows;
begin
  if p_workflow_id is null then
    raise exception 'workflow id must not be null' using errcode = '22004';
  end if;

  select w.* into v_workflow from geneva.workflows w where w.id = p_workflow_id;
  if not found and exists (select from geneva.workflows_history h where h.id = p_workflow_id) then
    return null;
  end if;
  if not found then
    raise exception 'workflow % not found', p_workflow_id
      using errcode = 'P0002',
            table = 'workflows';
  end if;

  return geneva._final_step_at(v_workflow);
end;
$$;

comment on function geneva.final_step_at(bigint) is
'The earliest instant a workflow''s last step can start; NULL once it ended.';
