-- geneva._lock_execution: locks an execution's workflow row, then the
-- execution row (the one lock order used everywhere), and returns the
-- execution as it is under the lock.
--
-- Called by: start_step, complete_step, fail_step.
-- Raises: 22004 for a NULL id; P0002 when the execution does not exist.
create or replace function geneva._lock_execution(p_execution_id bigint)
returns geneva.step_executions
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_workflow_id bigint;
  v_execution geneva.step_executions;
begin
  if p_execution_id is null then
    raise exception 'execution id must not be null' using errcode = '22004';
  end if;

  select e.workflow_id into v_workflow_id
  from geneva.step_executions e
  where e.id = p_execution_id;

  if found then
    perform
    from geneva.workflows w
    where w.id = v_workflow_id
    for no key update;

    select e.* into v_execution
    from geneva.step_executions e
    where e.id = p_execution_id
    for no key update;
  end if;

  if v_execution.id is null then
    raise exception 'step execution % not found', p_execution_id
      using errcode = 'P0002',
            table = 'step_executions';
  end if;

  return v_execution;
end;
$$;
