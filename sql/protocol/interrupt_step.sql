-- geneva.interrupt_step: a worker gives back a step it could not finish
-- because it is shutting down; the step is run again.
--
-- Called by: the worker, when its shutdown cancels a running step; p_job_id
-- names the River job it ran, completed in the same transaction.
-- The execution ends as geneva._signal_effects' row (worker, interrupt) says:
-- completed/recovered (metadata.recovery_reason 'interrupted', so it neither
-- counts as a reattempt nor as a failure), and the same step is scheduled
-- now, on another worker, continuing from the cursor a resumable step last
-- saved; an operator's pause or cancel requested meanwhile applies (see
-- geneva._advance).
--
-- geneva._end_running records it, as a batch of one.
--
-- Locks: the workflow row, then the execution row.
-- Returns the recorded outcome (NULL when the execution was no longer
-- in_progress) and the workflow's state after it.
-- Raises: 22004 for a NULL id; 22023 for a p_job_id that did not run the
-- execution (geneva._check_job); P0002 for an unknown execution.
create or replace function geneva.interrupt_step(p_execution_id bigint, p_job_id bigint default null)
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
    array[p_execution_id], array['worker'], array['interrupt'], array[null::interval], array[p_job_id], array[false]
  ) c;
end;
$$;

comment on function geneva.interrupt_step(bigint, bigint) is
'Worker protocol: a shutting-down worker gives back a running step, which is scheduled again now.';
