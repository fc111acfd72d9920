-- geneva.complete_step: records how a step that ran ended without an error,
-- and moves the workflow on.
--
-- Called by: the worker after the step function returned; p_job_id names the
-- River job it ran, which is completed in the same transaction (see
-- geneva._complete_job). p_signal is what the step returned: success,
-- finished, reattempt, reattempt_rewind, skip, cancel, pause or suspend. What
-- each does to the execution (state, outcome) and to the workflow is its row
-- in geneva._signal_effects (cause step). The three that run the same step
-- again (reattempt, reattempt_rewind, suspend) do it at now + p_wait: a
-- reattempt's successor keeps a resumable step's cursor, a rewind's starts
-- without it (metadata.rewind), and a suspend hands over (the successor
-- continues from this execution, with its cursor). After a pause, resume
-- runs the step again (from a resumable step's cursor).
-- An operator's pause or cancel requested while the step ran applies now (see
-- geneva._advance).
--
-- Locks: the workflow row, then the execution row.
-- Returns the recorded outcome and the workflow's state after it. The outcome
-- is NULL when nothing was recorded because the execution is no longer
-- in_progress (housekeeping recovered it while a slow worker ran).
-- Raises: 22004 for a NULL id or signal; 22023 for an unknown signal, a
-- negative wait or one longer than 100 years, a wait with a signal that takes
-- none, or a p_job_id that did not run the execution (geneva._check_job);
-- P0002 for an unknown execution.
create or replace function geneva.complete_step(
  p_execution_id bigint,
  p_signal text default 'success',
  p_wait interval default null,
  p_job_id bigint default null
)
returns table (outcome text, workflow_state text)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return query
  select c.outcome, c.workflow_state
  from geneva._end_running(
    array[p_execution_id], array['step'], array[p_signal], array[p_wait], array[p_job_id], array[false]
  ) c;
end;
$$;

comment on function geneva.complete_step(bigint, text, interval, bigint) is
'Worker protocol: records a step''s normal end or flow-control signal and schedules what comes next.';
