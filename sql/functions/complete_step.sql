-- geneva.complete_step: records how a step that ran ended without an error,
-- and moves the workflow on.
--
-- Called by: the worker after the step function returned; p_job_id names the
-- River job it ran, which is completed in the same transaction (see
-- geneva._complete_job). p_signal is what the step returned:
--   success    completed/success; next step scheduled, or workflow finished
--   finished   completed/success; workflow finished
--   reattempt  completed/reattempted; the same step at now + p_wait (a
--              resumable step's successor keeps its cursor)
--   skip       skipped/skipped_by_flow_control; next step scheduled
--   cancel     canceled/canceled_by_flow_control; workflow canceled
--   pause      canceled/paused_by_flow_control; workflow paused (resume runs
--              the step anew)
--   suspend    completed/suspended; a resumable step hands over: the same step
--              at now + p_wait, continuing from this execution with its cursor
-- An operator's pause or cancel requested while the step ran applies now (see
-- geneva._advance).
--
-- Locks: the workflow row, then the execution row.
-- Returns the recorded outcome and the workflow's state after it. The outcome
-- is NULL when nothing was recorded because the execution is no longer
-- in_progress (housekeeping recovered it while a slow worker ran).
-- Raises: 22004 for a NULL id or signal; 22023 for an unknown signal, a
-- negative wait, or a wait with a signal that takes none; P0002 for an unknown
-- execution.
create or replace function geneva.complete_step(
  p_execution_id bigint,
  p_signal text default 'success',
  p_wait interval default null,
  p_job_id bigint default null
)
returns table (outcome text, workflow_state text)
language plpgsql
volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_locked record;
  v_execution geneva.step_executions;
  v_workflow geneva.workflows;
  v_state text;
  v_outcome text;
  v_move text;
  v_metadata jsonb;
begin
  if p_signal is null then
    raise exception 'signal must not be null' using errcode = '22004';
  end if;
  if p_signal not in ('success', 'finished', 'reattempt', 'skip', 'cancel', 'pause', 'suspend') then
    raise exception 'unknown signal %', p_signal
      using errcode = '22023',
            hint = 'Signals are success, finished, reattempt, skip, cancel, pause and suspend.';
  end if;
  if p_wait < interval '0' then
    raise exception 'wait % is negative', p_wait using errcode = '22023';
  end if;
  if p_wait is not null and p_signal not in ('reattempt', 'suspend') then
    raise exception 'signal % takes no wait', p_signal
      using errcode = '22023',
            hint = 'Only reattempt and suspend take a wait.';
  end if;

  v_locked := geneva._lock_execution(p_execution_id);
  v_workflow := v_locked.o_workflow;
  v_execution := v_locked.o_execution;

  -- guard: the execution moved on while the step ran: record nothing
  if v_execution.state <> 'in_progress' then
    perform geneva._complete_job(p_job_id);
    return query select null::text, v_workflow.state;
    return;
  end if;

  -- guard: a workflow that is not performing has no running step to report
  if v_workflow.state <> 'performing' then
    perform geneva._end_execution(v_execution, 'canceled', 'canceled_externally');
    perform geneva._complete_job(p_job_id);
    return query select 'canceled_externally'::text, v_workflow.state;
    return;
  end if;

  -- what the signal does to the execution and the workflow
  case p_signal
    when 'success' then
      v_state := 'completed';
      v_outcome := 'success';
      v_move := 'next';
    when 'finished' then
      v_state := 'completed';
      v_outcome := 'success';
      v_move := 'finish';
    when 'reattempt' then
      v_state := 'completed';
      v_outcome := 'reattempted';
      v_move := 'same';
      v_metadata := jsonb_build_object('reattempt_reason', 'flow_control');
    when 'skip' then
      v_state := 'skipped';
      v_outcome := 'skipped_by_flow_control';
      v_move := 'next';
    when 'cancel' then
      v_state := 'canceled';
      v_outcome := 'canceled_by_flow_control';
      v_move := 'cancel';
    when 'pause' then
      v_state := 'canceled';
      v_outcome := 'paused_by_flow_control';
      v_move := 'pause';
    when 'suspend' then
      v_state := 'completed';
      v_outcome := 'suspended';
      v_move := 'same';
  end case;

  perform geneva._end_execution(v_execution, v_state, v_outcome, p_metadata => v_metadata);
  v_workflow := geneva._advance(
    v_workflow, geneva._definition(v_workflow.workflow_type), v_move, v_execution.step_name, p_wait,
    v_execution
  );

  perform geneva._complete_job(p_job_id);
  return query select v_outcome, v_workflow.state;
end;
$$;

comment on function geneva.complete_step(bigint, text, interval, bigint) is
'Worker protocol: records a step''s normal end or flow-control signal and schedules what comes next.';
