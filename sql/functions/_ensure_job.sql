-- geneva._ensure_job: makes sure a River job will trigger a scheduled execution.
--
-- Called by: geneva.start_step (a job that arrived early), geneva.resume_workflow
-- (the execution kept while the workflow was paused). The caller holds the
-- workflow and execution locks.
--
-- When the execution's recorded job is still waiting in River (see
-- geneva._job_waits), nothing is done: it will come. Otherwise (it ran, is
-- running now, was parked pending, or was deleted) a new job is inserted, in
-- the definition's queue with its priority, due at the execution's
-- scheduled_for (at once when that has passed), and recorded on the
-- execution.
create or replace function geneva._ensure_job(
  p_workflow geneva.workflows,
  p_execution geneva.step_executions
)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_definition geneva.workflow_definitions;
  v_job_id bigint;
begin
  if exists (
    select 1
    from public.river_job j
    where j.id = p_execution.job_id
      and geneva._job_waits(j.state::text)
  ) then
    return;
  end if;

  v_definition := geneva._definition(p_workflow.workflow_type);

  v_job_id := geneva._enqueue_step(
    p_execution.id,
    p_workflow,
    p_execution.step_name,
    p_execution.scheduled_for,
    v_definition.queue,
    v_definition.priority
  );

  update geneva.step_executions e
  set job_id = v_job_id,
    updated_at = geneva.now()
  where e.id = p_execution.id;
end;
$$;
