-- geneva._lock_workflow: locks a workflow row and returns it as it is under the
-- lock. A workflow moved into history (docs/history.md) is returned as it
-- is there, unlocked: it has ended, and its row never changes again, so
-- each caller refuses it or reads it as it does any ended workflow (55000
-- for a verb, false for send_event, a new run for retry_workflow), never
-- P0002. Only a live miss reads history: the callers' path is unchanged.
--
-- Called by: pause_workflow, resume_workflow, cancel_workflow, skip_step,
-- schedule_step.
-- Raises: 22004 for a NULL id; P0002 when the workflow does not exist.
create or replace function geneva._lock_workflow(p_workflow_id bigint)
returns geneva.workflows
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow geneva.workflows;
begin
  if p_workflow_id is null then
    raise exception 'workflow id must not be null' using errcode = '22004';
  end if;

  select w.* into v_workflow
  from geneva.workflows w
  where w.id = p_workflow_id
  for no key update;

  if not found then
    -- (its ended_on, the last column, is left out of the row)
    select h.* into v_workflow from geneva.workflows_history h where h.id = p_workflow_id;
  end if;
  if not found then
    raise exception 'workflow % not found', p_workflow_id
      using errcode = 'P0002',
            table = 'workflows';
  end if;

  return v_workflow;
end;
$$;
