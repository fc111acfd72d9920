-- geneva._end_execution: moves an execution to an end state with its outcome.
--
-- Called by: every function that records what happened to an execution, with
-- the execution as read under its lock. The caller holds the workflow lock,
-- then the execution lock, and has checked that the execution is active.
--
-- It is geneva._end_executions with one element (the state's own timestamp
-- and finished_at set, the error columns written when given, p_metadata
-- merged into the execution's metadata, the end counted). A scheduled
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
begin
  perform geneva._end_executions(
    array[p_execution.id], array[p_state], array[p_outcome], array[p_metadata],
    p_error_class_name, p_error_message, p_error_backtrace, p_error_classes
  );

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
