-- geneva._exception_reattempts: how many consecutive exception reattempts a
-- workflow's step has had: its executions reattempted by an exception since
-- its last success, recovery or resumable hand-over (what a reattempt
-- policy's cap and backoff count; geneva._exception_effect).
--
-- Called by: geneva._end_running (a failure), fail_step (a precondition's).
-- Takes no locks; the caller holds the workflow's.
create or replace function geneva._exception_reattempts(p_workflow_id bigint, p_step_name text)
returns integer
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
  select count(*)::integer
  from geneva.step_executions e
  where e.workflow_id = p_workflow_id
    and e.step_name = p_step_name
    and e.outcome = 'reattempted_by_exception'
    and e.id > coalesce((
      select max(s.id)
      from geneva.step_executions s
      where s.workflow_id = p_workflow_id
        and s.step_name = p_step_name
        and s.outcome in ('success', 'recovered', 'suspended')
    ), 0)
$$;
