-- geneva.get_step_execution: one step execution, live or moved into history
-- with its workflow (docs/history.md): the live row first, then
-- geneva.step_executions_history's (each partition's primary key probed).
--
-- Called by: applications, operators, goclient.GetStepExecution, the test
-- helpers. Takes no locks.
-- Raises: 22004 for a NULL id; P0002 for an unknown execution.
create or replace function geneva.get_step_execution(p_execution_id bigint)
returns geneva.step_executions
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_execution geneva.step_executions;
begin
  if p_execution_id is null then
    raise exception 'execution id must not be null' using errcode = '22004';
  end if;

  select e.* into v_execution from geneva.step_executions e where e.id = p_execution_id;
  if not found then
    -- (its ended_on, the last column, is left out of the row)
    select h.* into v_execution from geneva.step_executions_history h where h.id = p_execution_id;
  end if;
  if not found then
    raise exception 'step execution % not found', p_execution_id
      using errcode = 'P0002',
            table = 'step_executions';
  end if;

  return v_execution;
end;
$$;

comment on function geneva.get_step_execution(bigint) is
'One step execution by id.';
