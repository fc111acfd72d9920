-- geneva._enqueue_step: inserts the River job that will trigger a step execution.
--
-- Called by: geneva._insert_execution, geneva._ensure_job. Runs in the
-- caller's transaction, so scheduling and enqueueing commit or roll back
-- together.
-- Takes no locks of its own.
--
-- The job carries the execution id and the immutable facts a worker needs to
-- evaluate its conditions without a read. River runs on the real clock while
-- the engine may run on geneva.fake_now, so the job is due after the same delay
-- as the execution: now() + (p_scheduled_for - geneva.now()). A job due now is
-- inserted `available` and wakes River's producers at once with River's insert
-- notification (topic public.river_insert, see geneva._notify_insert). As River
-- does for its own short
-- snoozes, a job due within River's scheduler interval (5 seconds) is inserted
-- `available` with its future time, for the producers' next fetch after it;
-- a later one is inserted `scheduled` and River's scheduler makes it available
-- when due.
create or replace function geneva._enqueue_step(
  p_execution_id bigint,
  p_workflow geneva.workflows,
  p_step_name text,
  p_scheduled_for timestamptz,
  p_queue text,
  p_priority smallint
)
returns bigint
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_delay interval := greatest(p_scheduled_for - geneva.now(), interval '0');
  v_available boolean := geneva._step_job_available(v_delay);
  v_job_id bigint;
begin
  insert into public.river_job (
    args, kind, max_attempts, priority, queue, scheduled_at, state, metadata, tags
  ) values (
    geneva._step_job_args(
      p_execution_id, p_workflow.id, p_workflow.workflow_type, p_workflow.hero_type, p_workflow.hero_id,
      p_step_name
    ),
    'geneva_step',
    25,
    p_priority,
    p_queue,
    now() + v_delay,
    case when v_available then 'available' else 'scheduled' end::public.river_job_state,
    '{}',
    '{}'
  )
  returning id into v_job_id;

  if v_delay = interval '0' then
    perform geneva._notify_insert(p_queue);
  end if;

  return v_job_id;
end;
$$;
