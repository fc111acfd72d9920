-- geneva._complete_step: the body of geneva.complete_step and
-- geneva.complete_and_continue, which document it; p_continue is false for
-- the first.
create or replace function geneva._complete_step(
  p_execution_id bigint,
  p_signal text,
  p_wait interval,
  p_job_id bigint,
  p_continue boolean
)
returns table (
  outcome text,
  workflow_state text,
  next_execution_id bigint,
  next_step_name text,
  next_attempt integer,
  next_started_at timestamptz,
  next_cursor jsonb,
  next_continues_from_id bigint
)
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
  v_next geneva.step_executions;
begin
  if p_signal is null then
    raise exception 'signal must not be null' using errcode = '22004';
  end if;
  if p_signal not in ('success', 'finished', 'reattempt', 'reattempt_rewind', 'skip', 'cancel', 'pause', 'suspend') then
    raise exception 'unknown signal %', p_signal
      using errcode = '22023',
            hint = 'Signals are success, finished, reattempt, reattempt_rewind, skip, cancel, pause and suspend.';
  end if;
  if p_wait < interval '0' then
    raise exception 'wait % is negative', p_wait using errcode = '22023';
  end if;
  if p_wait is not null and p_signal not in ('reattempt', 'reattempt_rewind', 'suspend') then
    raise exception 'signal % takes no wait', p_signal
      using errcode = '22023',
            hint = 'Only reattempt, reattempt_rewind and suspend take a wait.';
  end if;

  v_locked := geneva._lock_execution(p_execution_id);
  v_workflow := v_locked.o_workflow;
  v_execution := v_locked.o_execution;

  if v_execution.state <> 'in_progress' then
    -- guard: the execution moved on while the step ran: record nothing. A
    -- worker calling complete_and_continue again because the reply to a call
    -- that committed was lost gets the step that call started (the
    -- workflow's next execution, in_progress without a job), or no one would
    -- run it until housekeeping found it stuck.
    if p_continue and v_workflow.state = 'performing' then
      select e.* into v_next
      from geneva.step_executions e
      where e.workflow_id = v_workflow.id
        and e.state = 'in_progress'
        and e.job_id is null
        and e.id > p_execution_id
        and not exists (
          select from geneva.step_executions b
          where b.workflow_id = v_workflow.id and b.id > p_execution_id and b.id < e.id
        );
    end if;
  elsif v_workflow.state <> 'performing' then
    -- guard: a workflow that is not performing has no running step to report
    perform geneva._end_execution(v_execution, 'canceled', 'canceled_externally');
    outcome := 'canceled_externally';
  else
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
      when 'reattempt_rewind' then
        v_state := 'completed';
        v_outcome := 'reattempted';
        v_move := 'same';
        v_metadata := jsonb_build_object('reattempt_reason', 'flow_control', 'rewind', true);
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
    if p_signal = 'reattempt_rewind' then
      -- the successor starts from nothing (the ended row keeps its cursor)
      v_execution.cursor := null;
    end if;
    v_workflow := geneva._advance(
      v_workflow, geneva._definition(v_workflow.workflow_type), v_move, v_execution.step_name, p_wait,
      v_execution, p_inline => coalesce(p_continue, false)
    );

    -- a workflow left performing has its next execution started for the worker
    if v_workflow.state = 'performing' then
      select e.* into v_next
      from geneva.step_executions e
      where e.workflow_id = v_workflow.id
        and e.state in ('scheduled', 'in_progress');
    end if;
    outcome := v_outcome;
  end if;

  next_execution_id := v_next.id;
  next_step_name := v_next.step_name;
  next_attempt := v_next.attempt;
  next_started_at := v_next.started_at;
  next_cursor := v_next.cursor;
  next_continues_from_id := v_next.continues_from_id;
  perform geneva._complete_job(p_job_id);
  workflow_state := v_workflow.state;
  return next;
end;
$$;


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
--   reattempt_rewind  as reattempt, but the successor starts without a
--              cursor (metadata.rewind)
--   skip       skipped/skipped_by_flow_control; next step scheduled
--   cancel     canceled/canceled_by_flow_control; workflow canceled
--   pause      canceled/paused_by_flow_control; workflow paused (resume runs
--              the step again, from a resumable step's cursor)
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
begin
  return query
  select c.outcome, c.workflow_state
  from geneva._complete_step(p_execution_id, p_signal, p_wait, p_job_id, false) c;
end;
$$;

comment on function geneva.complete_step(bigint, text, interval, bigint) is
'Worker protocol: records a step''s normal end or flow-control signal and schedules what comes next.';

-- geneva.complete_and_continue: geneva.complete_step for a worker that offers
-- to run the next step in the same job.
--
-- Called by: the Go worker (Config.InlineSteps). It records the step's end as
-- complete_step does; then, when what comes next is due now and has no
-- condition of the worker's to evaluate first (the definition has no
-- cancel_if, the step no skip_if), it starts it here, in this transaction,
-- without a River job, and returns it: the worker runs it at once and reports
-- it like any other. Otherwise the next execution is scheduled with its job as
-- usual. A worker that dies while running it leaves an in_progress execution,
-- as any crash does, for housekeeping to recover.
--
-- Locks: the workflow row, then the execution row, then the next execution's.
-- Returns what complete_step returns, then the started next execution: its
-- id, step name, attempt, start, and the cursor and execution it continues
-- from (a resumable step's hand-over); NULLs when none was started.
-- Raises: as complete_step.
create or replace function geneva.complete_and_continue(
  p_execution_id bigint,
  p_signal text default 'success',
  p_wait interval default null,
  p_job_id bigint default null
)
returns table (
  outcome text,
  workflow_state text,
  next_execution_id bigint,
  next_step_name text,
  next_attempt integer,
  next_started_at timestamptz,
  next_cursor jsonb,
  next_continues_from_id bigint
)
language plpgsql
volatile
set search_path = ''
as $$
begin
  return query select * from geneva._complete_step(p_execution_id, p_signal, p_wait, p_job_id, true);
end;
$$;

comment on function geneva.complete_and_continue(bigint, text, interval, bigint) is
'Worker protocol: complete_step, then starts and returns the next execution when it is due now and needs no worker condition.';
