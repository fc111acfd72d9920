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
set search_path = pg_catalog, pg_temp
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
  perform geneva._check_wait(p_wait, 'signal ' || p_signal);
  if p_wait is not null and p_signal not in ('reattempt', 'reattempt_rewind', 'suspend') then
    raise exception 'signal % takes no wait', p_signal
      using errcode = '22023',
            hint = 'Only reattempt, reattempt_rewind and suspend take a wait.';
  end if;

  v_locked := geneva._lock_execution(p_execution_id);
  perform geneva._check_job(v_locked.o_execution, p_job_id);
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
