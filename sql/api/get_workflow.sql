-- geneva.get_workflow: one workflow, live or moved into history
-- (docs/history.md): the live row first (geneva.workflows' primary key),
-- then geneva.workflows_history's (no day is known: each partition's
-- primary key is probed).
--
-- Called by: applications, operators, goclient.GetWorkflow. Takes no locks.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow.
create or replace function geneva.get_workflow(p_workflow_id bigint)
returns geneva.workflows
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
  if not found then
    -- (its ended_on, the last column, is left out of the row)
    select h.* into v_workflow from geneva.workflows_history h where h.id = p_workflow_id;
  end if;
  if not found then
    raise exception 'workflow % not found', p_workflow_id
      using errcode = 'P0002',
            table = 'workflows';
  end if;

  -- (its children's ends as they are now: docs/children.md)
  v_workflow.children_ended := geneva._children_ended_now(v_workflow.id, v_workflow.children, v_workflow.children_ended);
  return v_workflow;
end;
$$;

comment on function geneva.get_workflow(bigint) is
'One workflow by id.';
