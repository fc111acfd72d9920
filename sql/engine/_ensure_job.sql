-- geneva._ensure_job: makes sure a River job will trigger a scheduled execution.
--
-- Called by: geneva.start_steps (a job that arrived early, an await due
-- again at its timeout), geneva.resume_workflow (the execution kept while
-- the workflow was paused), geneva._send_event (an awaiting execution its
-- event made due sooner), geneva._limit_release (a waiter woken: with
-- p_record false, before it updates the execution, which it then writes
-- once). The caller holds the workflow and execution locks.
--
-- When the execution's recorded job is still waiting in River (see
-- geneva._job_waits), it will come: it is only brought forward when the
-- execution is due before it (an event came), River hearing of it at once
-- when it is due now. Otherwise (it ran, is
-- running now, was parked pending, or was deleted) a new job is inserted, in
-- the step's queue (geneva._step_queue) with the definition's priority, due at the execution's
-- scheduled_for (at once when that has passed), and recorded on the
-- execution (unless p_record is false: the caller records it).
-- Returns the new job's id, NULL when the recorded one still waits.
create or replace function geneva._ensure_job(
  p_workflow geneva.workflows,
  p_execution geneva.step_executions,
  p_record boolean default true
)
returns bigint
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_definition geneva.workflow_definitions;
  v_job_id bigint;
  v_delay interval := greatest(p_execution.scheduled_for - geneva.now(), interval '0');
  v_job record;
begin
  select j.id, j.state::text as state, j.scheduled_at, j.queue into v_job
  from public.river_job j
  where j.id = p_execution.job_id;
  if v_job.id is not null and geneva._job_waits(v_job.state) then
    if v_job.scheduled_at > now() + v_delay then
      update public.river_job j
      set scheduled_at = now() + v_delay,
        state = case when geneva._step_job_available(v_delay) then 'available' else 'scheduled' end::public.river_job_state
      where j.id = v_job.id
        -- (River may have fetched it meanwhile: then its worker starts the execution)
        and geneva._job_waits(j.state::text);
      if v_delay = interval '0' then
        perform geneva._notify_insert(v_job.queue);
      end if;
    end if;
    return null;
  end if;

  v_definition := geneva._definition(p_workflow.workflow_type);

  v_job_id := geneva._enqueue_step(
    p_execution.id,
    p_workflow,
    p_execution.step_name,
    p_execution.scheduled_for,
    geneva._step_queue(v_definition.step_names, v_definition.step_queues, v_definition.queue, p_execution.step_name),
    v_definition.priority
  );

  if p_record then
    update geneva.step_executions e
    set job_id = v_job_id,
      updated_at = geneva.now()
    where e.id = p_execution.id;
  end if;
  return v_job_id;
end;
$$;
