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
  -- what the signal does to the execution and the workflow
  select e.execution_state, e.outcome, e.workflow_move, e.metadata
  into v_state, v_outcome, v_move, v_metadata
  from geneva._signal_effects() e
  where e.cause = 'step' and e.signal = p_signal;
  if not found then
    raise exception 'unknown signal %', p_signal
      using errcode = '22023',
            hint = format('Signals are %s.', (
              select string_agg(e.signal, ', ') from geneva._signal_effects() e where e.cause = 'step'
            ));
  end if;
  perform geneva._check_wait(p_wait, 'signal ' || p_signal);
  -- (the signals that run the same step again wait before it)
  if p_wait is not null and v_move <> 'same' then
    raise exception 'signal % takes no wait', p_signal
      using errcode = '22023',
            hint = format('Only %s take a wait.', (
              select string_agg(e.signal, ', ') from geneva._signal_effects() e
              where e.cause = 'step' and e.workflow_move = 'same'
            ));
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
    outcome := geneva._end_as(v_execution, 'stray', 'cancel');
  else
    perform geneva._end_execution(v_execution, v_state, v_outcome, p_metadata => v_metadata);
    if v_metadata ? 'rewind' then
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
