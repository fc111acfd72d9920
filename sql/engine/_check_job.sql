-- geneva._check_job: refuses a worker's report that names a River job other
-- than one that ran the execution: a geneva_step job for the execution (its
-- own job_id, or any copy of it River delivered: its arguments name the
-- execution), or, for an execution a chain of inline steps started without a
-- job (complete_and_continue), the job of the chain: that of the last
-- execution of the workflow before it that has one. Without the check a
-- report could complete any running job of River's.
--
-- Called by: geneva._end_running (behind complete_step, complete_and_continue,
-- complete_steps and interrupt_step) and fail_step, under the workflow and
-- execution locks, with the locked execution and the p_job_id the worker
-- passed (NULL: no job to complete, nothing to check).
-- Raises: 22023 naming the job and the execution.
create or replace function geneva._check_job(p_execution geneva.step_executions, p_job_id bigint)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_head geneva.step_executions := p_execution;
begin
  if p_job_id is null or p_job_id = p_execution.job_id then
    return;
  end if;
  if p_execution.job_id is null then
    select e.* into v_head
    from geneva.step_executions e
    where e.workflow_id = p_execution.workflow_id
      and e.id < p_execution.id
      and e.job_id is not null
    order by e.id desc
    limit 1;
    if p_job_id = v_head.job_id then
      return;
    end if;
  end if;
  if v_head.id is null or not exists (
    select from public.river_job j
    where j.id = p_job_id
      and j.kind = 'geneva_step'
      and j.args ->> 'execution_id' = v_head.id::text
  ) then
    raise exception 'job % did not run step execution %', p_job_id, p_execution.id
      using errcode = '22023',
            detail = pg_catalog.format('Its job is %s.', coalesce(v_head.job_id::text, 'none')),
            table = 'step_executions';
  end if;
end;
$$;
