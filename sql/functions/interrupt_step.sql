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
#variable_conflict use_column
declare
  v_locked record := geneva._lock_execution(p_execution_id);
  v_execution geneva.step_executions := v_locked.o_execution;
  v_workflow geneva.workflows := v_locked.o_workflow;
  v_effect record;
begin
  perform geneva._check_job(v_execution, p_job_id);
  if v_execution.state <> 'in_progress' then
    -- guard: the execution moved on while the step ran: record nothing
    null;
  elsif v_workflow.state <> 'performing' then
    -- guard: a workflow that is not performing has no running step to give back
    outcome := geneva._end_as(v_execution, 'stray', 'cancel');
  else
    select e.* into strict v_effect
    from geneva._signal_effects() e
    where e.cause = 'worker' and e.signal = 'interrupt';
    perform geneva._end_execution(
      v_execution, v_effect.execution_state, v_effect.outcome, p_metadata => v_effect.metadata
    );
    v_workflow := geneva._advance(
      v_workflow, geneva._definition(v_workflow.workflow_type), v_effect.workflow_move, v_execution.step_name,
      p_from => v_execution
    );
    outcome := v_effect.outcome;
  end if;

  perform geneva._complete_job(p_job_id);
  workflow_state := v_workflow.state;
  return next;
end;
$$;

comment on function geneva.interrupt_step(bigint, bigint) is
'Worker protocol: a shutting-down worker gives back a running step, which is scheduled again now.';
