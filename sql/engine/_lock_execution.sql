-- geneva._lock_execution: locks an execution's workflow row, then the
-- execution row (the one lock order used everywhere), and returns both as
-- they are under the locks.
--
-- Called by: start_step, complete_step, fail_step, interrupt_step:
--   v_locked := geneva._lock_execution(p_execution_id);
--   v_workflow := v_locked.o_workflow;
--   v_execution := v_locked.o_execution;
-- Raises: 22004 for a NULL id; P0002 when the execution does not exist.
create or replace function geneva._lock_execution(
  p_execution_id bigint,
  out o_workflow geneva.workflows,
  out o_execution geneva.step_executions
)
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_execution_id is null then
    raise exception 'execution id must not be null' using errcode = '22004';
  end if;

  -- (an execution's workflow_id never changes: reading it unlocked is safe)
  select w.* into o_workflow
  from geneva.workflows w
  where w.id = (select e.workflow_id from geneva.step_executions e where e.id = p_execution_id)
  for no key update;

  select e.* into o_execution
  from geneva.step_executions e
  where e.id = p_execution_id
  for no key update;

  if o_execution.id is null or o_workflow.id is null then
    raise exception 'step execution % not found', p_execution_id
      using errcode = 'P0002',
            table = 'step_executions';
  end if;
end;
$$;
