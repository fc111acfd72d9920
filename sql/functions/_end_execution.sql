-- geneva._end_execution: moves an execution to an end state with its outcome.
--
-- Called by: every function that records what happened to an execution, with
-- the execution as read under its lock. The caller holds the workflow lock,
-- then the execution lock, and has checked that the execution is active.
--
-- Sets the state's own timestamp and finished_at, writes the error columns
-- (error_class_name, error_message, error_backtrace, error_classes) when
-- given, and merges p_metadata into the execution's metadata. A scheduled
-- execution ended before its job ran (an operator's cancel or skip, a
-- recovery) has that job cancelled in River, so no worker runs its
-- conditions for nothing. The slots of limits it held are freed
-- (geneva._limit_release).
create or replace function geneva._end_execution(
  p_execution geneva.step_executions,
  p_state text,
  p_outcome text,
  p_error_class_name text default null,
  p_error_message text default null,
  p_error_backtrace text default null,
  p_metadata jsonb default null,
  p_error_classes text[] default null
)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
begin
  -- the only ender of executions (sql/triggers/step_executions_guard_state.sql)
  perform pg_catalog.set_config('geneva.ending', 'on', true);
  update geneva.step_executions e
  set state = p_state,
    outcome = p_outcome,
    completed_at = case when p_state = 'completed' then v_now else e.completed_at end,
    failed_at = case when p_state = 'failed' then v_now else e.failed_at end,
    canceled_at = case when p_state = 'canceled' then v_now else e.canceled_at end,
    skipped_at = case when p_state = 'skipped' then v_now else e.skipped_at end,
    finished_at = v_now,
    error_class_name = coalesce(p_error_class_name, e.error_class_name),
    error_message = coalesce(p_error_message, e.error_message),
    error_backtrace = coalesce(p_error_backtrace, e.error_backtrace),
    error_classes = coalesce(p_error_classes, e.error_classes),
    metadata = case when p_metadata is null then e.metadata else e.metadata || p_metadata end,
    updated_at = v_now
  where e.id = p_execution.id;
  perform pg_catalog.set_config('geneva.ending', '', true);

  if p_execution.state = 'scheduled' and p_execution.job_id is not null then
    update public.river_job j
    set state = 'cancelled',
      finalized_at = now()
    where j.id = p_execution.job_id
      and geneva._job_waits(j.state::text);
  end if;

  if p_execution.limit_keys is not null then
    perform geneva._limit_release(
      p_execution.limit_keys, array_fill(p_execution.workflow_id, array[cardinality(p_execution.limit_keys)])
    );
  end if;
end;
$$;
