-- geneva.step_history: a workflow's step executions, in order; those of a
-- workflow moved into history (docs/history.md) from
-- geneva.step_executions_history, of the partition of the day it ended.
--
-- Called by: applications, operators, goclient.StepHistory, `geneva show`.
-- Takes no locks.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow.
create or replace function geneva.step_history(p_workflow_id bigint)
returns setof geneva.step_executions
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_ended_on date;
  v_execution geneva.step_executions;
begin
  if p_workflow_id is null then
    raise exception 'workflow id must not be null' using errcode = '22004';
  end if;

  if exists (select from geneva.workflows w where w.id = p_workflow_id) then
    return query
    select e.*
    from geneva.step_executions e
    where e.workflow_id = p_workflow_id
    order by e.id;
    return;
  end if;

  select h.ended_on into v_ended_on from geneva.workflows_history h where h.id = p_workflow_id;
  if not found then
    raise exception 'workflow % not found', p_workflow_id
      using errcode = 'P0002',
            table = 'workflows';
  end if;
  -- (each row's ended_on, the last column, is left out of the row)
  for v_execution in
    select h.*
    from geneva.step_executions_history h
    where h.workflow_id = p_workflow_id and h.ended_on = v_ended_on
    order by h.id
  loop
    return next v_execution;
  end loop;
end;
$$;

comment on function geneva.step_history(bigint) is
'A workflow''s step executions, in order.';
