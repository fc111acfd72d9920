-- geneva.fail_step: records that a step (or the evaluation of its
-- preconditions) raised an error, resolves the exception policy, and moves the
-- workflow on.
--
-- Called by: the worker (p_job_id names the River job it ran, which is
-- completed in the same transaction, unless a handler's decision is asked
-- for), when the step function returned an error or panicked (p_precondition false:
-- it applies only to an in_progress execution), or when evaluating
-- cancel_if/skip_if failed before start_step (p_precondition true: it applies
-- only to a scheduled execution that is due, of a ready workflow; the
-- reattempt reason is then "precondition"; an early one keeps a job for its
-- time). p_error_classes lists the error's type names, outermost first, and
-- the names of the worker's matchers that match it: policies match against
-- them. p_error_chain lists the type names of the error's chain, the class to
-- record first (the most specific one: the Go worker looks through the
-- standard library's anonymous wrappers, fmt.Errorf's %w and errors.Join),
-- then the others; it is stored as error_classes and its first element as
-- error_class_name. Without it (NULL or empty), p_error_classes is stored
-- instead (and its first element as error_class_name). p_wait_at_least is
-- the least wait the error asks for (the Retry-After of an HTTP step's
-- reply): a reattempt, by the policy or a handler, waits at least that long
-- (recorded in the metadata as wait_at_least); other actions ignore it.
--
-- The policy is resolved by geneva._resolve_policy. What its action (pause,
-- cancel, skip or reattempt) does to the execution and the workflow is the
-- action's row in geneva._signal_effects (cause exception). A reattempt
-- schedules the same step at now + the policy's wait (growing with its
-- backoff, see geneva._backoff_wait), unless the step's consecutive exception
-- reattempts (since its last success or recovery) have reached the cap: then
-- the policy's terminal_action (pause by default, cancel or skip) applies
-- instead, as its row of cause exhausted says (failed/reattempts_exhausted).
-- The error columns are written in every case. When the policy names a
-- handler, nothing is recorded and the result says which handler to run; the
-- worker runs it and calls fail_step again with its decision in
-- p_handler_signal ('reattempt' with p_handler_wait, 'skip', 'cancel',
-- 'pause' (also for no decision) or 'finished'); a handler's reattempts have
-- no cap. An operator's pause or cancel requested while the step ran applies
-- now (see geneva._advance).
--
-- Locks: the workflow row, then the execution row.
-- Returns: action (what was applied: pause, cancel, skip, reattempt, finished,
-- or handler), outcome (NULL when nothing was recorded because the execution
-- can no longer fail: it moved on, or its workflow is paused), report (whether
-- the worker should report the error: the policy's report is always, the
-- default; never; or terminal_only, which reports unless the step is
-- reattempted), the workflow's state after it, and the handler to run.
-- Raises: 22004 for a NULL id; 22023 for an unknown handler decision, a
-- negative handler wait or p_wait_at_least, or one longer than 100 years, a wait with a decision
-- other than reattempt, a handler decision when no handler applies, or a
-- p_job_id that did not run the execution (geneva._check_job); P0002 for an
-- unknown execution.
create or replace function geneva.fail_step(
  p_execution_id bigint,
  p_error_classes text[],
  p_error_message text,
  p_error_backtrace text default null,
  p_handler_signal text default null,
  p_handler_wait interval default null,
  p_precondition boolean default false,
  p_job_id bigint default null,
  p_error_chain text[] default null,
  p_wait_at_least interval default null
)
returns table (
  action text,
  outcome text,
  report boolean,
  workflow_state text,
  handler text
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := geneva.now();
  v_precondition boolean := coalesce(p_precondition, false);
  v_locked record;
  v_execution geneva.step_executions;
  v_workflow geneva.workflows;
  v_definition geneva.workflow_definitions;
  v_reason text;
  v_policy jsonb;
  v_cause text := 'exception';
  v_action text;
  v_wait interval;
  v_cap integer;
  v_count integer;
  v_state text;
  v_outcome text;
  v_move text;
  v_error_chain text[] := case
    when cardinality(p_error_chain) > 0 then p_error_chain
    else p_error_classes
  end;
  v_metadata jsonb;
  v_effect_metadata jsonb;
begin
  -- (nested: PL/pgSQL runs a condition with a subquery as a query, every time)
  if p_handler_signal is not null then
    if not exists (
      select from geneva._signal_effects() e where e.cause = 'exception' and e.signal = p_handler_signal
    ) then
      raise exception 'unknown handler decision %', p_handler_signal
        using errcode = '22023',
              hint = format('A handler decides %s.', (
                select string_agg(e.signal, ', ') from geneva._signal_effects() e where e.cause = 'exception'
              ));
    end if;
  end if;
  perform geneva._check_wait(p_handler_wait, 'handler decision');
  perform geneva._check_wait(p_wait_at_least, 'wait at least');
  if p_handler_wait is not null and p_handler_signal is distinct from 'reattempt' then
    raise exception 'handler decision % takes no wait', coalesce(p_handler_signal, 'none')
      using errcode = '22023';
  end if;

  v_locked := geneva._lock_execution(p_execution_id);
  perform geneva._check_job(v_locked.o_execution, p_job_id);
  v_workflow := v_locked.o_workflow;
  v_execution := v_locked.o_execution;

  -- guard: the phase that failed must be the execution's: a running step's
  -- error, or a precondition's before the step started; otherwise the
  -- execution moved on: record nothing
  if not v_precondition and v_execution.state <> 'in_progress'
    or v_precondition and (v_execution.state <> 'scheduled' or v_workflow.state <> 'ready') then
    null;
  elsif not v_precondition and v_workflow.state <> 'performing' then
    -- guard: a workflow that is not performing has no running step to fail
    outcome := geneva._end_as(v_execution, 'stray', 'cancel');
  elsif v_precondition and v_execution.scheduled_for > v_now then
    -- guard: an early job leaves the execution for a job at its time
    perform geneva._ensure_job(v_workflow, v_execution);
  else
    v_reason := case when v_precondition then 'precondition' else 'exception_policy' end;
    v_definition := geneva._definition(v_workflow.workflow_type);
    v_policy := geneva._resolve_policy(v_definition, v_execution.step_name, p_error_classes);

    -- guard: a handler decides in Go; ask for its decision first (nothing is
    -- recorded and the job stays the worker's until it calls again)
    if v_policy ? 'handler' then
      if p_handler_signal is null then
        return query select 'handler'::text, null::text, false, v_workflow.state, v_policy ->> 'handler';
        return;
      end if;
      v_action := p_handler_signal;
      v_wait := p_handler_wait;
    elsif p_handler_signal is not null then
      raise exception 'execution % has no handler policy for this error', p_execution_id
        using errcode = '22023',
              detail = format('The policy that applies is %s.', v_policy),
              hint = 'Call fail_step without a handler decision.';
    else
      v_action := v_policy ->> 'action';
      v_wait := case when v_policy ? 'wait' then geneva._parse_wait(v_policy -> 'wait', 'policy') end;
      v_cap := (v_policy ->> 'cap')::integer;
    end if;

    v_metadata := jsonb_build_object(
      'error_classes', to_jsonb(coalesce(p_error_classes, '{}')),
      'policy', v_policy
    );

    -- guard: the reattempt cap and the backoff count consecutive exception
    -- reattempts of this step since its last success, recovery or resumable
    -- hand-over
    if v_action = 'reattempt' and (v_cap is not null or v_policy ? 'backoff') then
      select count(*) into v_count
      from geneva.step_executions e
      where e.workflow_id = v_workflow.id
        and e.step_name = v_execution.step_name
        and e.outcome = 'reattempted_by_exception'
        and e.id > coalesce((
          select max(s.id)
          from geneva.step_executions s
          where s.workflow_id = v_workflow.id
            and s.step_name = v_execution.step_name
            and s.outcome in ('success', 'recovered', 'suspended')
        ), 0);

      if v_count >= v_cap then
        v_cause := 'exhausted';
        v_action := coalesce(v_policy ->> 'terminal_action', 'pause');
        v_metadata := v_metadata || jsonb_build_object('consecutive_reattempts', v_count);
      elsif v_policy ? 'backoff' then
        v_wait := geneva._backoff_wait(v_policy, v_count);
      end if;
    end if;

    -- what the action does to the execution and the workflow
    select e.execution_state, e.outcome, e.workflow_move, e.metadata
    into strict v_state, v_outcome, v_move, v_effect_metadata
    from geneva._signal_effects() e
    where e.cause = v_cause and e.signal = v_action;
    v_metadata := v_metadata || coalesce(v_effect_metadata, '{}');
    if v_move = 'same' then
      v_metadata := v_metadata || jsonb_build_object('reattempt_reason', v_reason);
      -- the error asked for a longer wait (an HTTP reply's Retry-After)
      if p_wait_at_least > coalesce(v_wait, interval '0') then
        v_wait := p_wait_at_least;
        v_metadata := v_metadata || jsonb_build_object('wait_at_least', p_wait_at_least);
      end if;
    end if;

    perform geneva._end_execution(
      v_execution, v_state, v_outcome, v_error_chain[1], p_error_message, p_error_backtrace, v_metadata,
      v_error_chain
    );
    v_workflow := geneva._advance(
      v_workflow, v_definition, v_move, v_execution.step_name,
      case when v_move = 'same' then v_wait end,
      v_execution
    );

    action := v_action;
    outcome := v_outcome;
    report := case coalesce(v_policy ->> 'report', 'always')
      when 'never' then false
      when 'terminal_only' then v_outcome <> 'reattempted_by_exception'
      else true
    end;
    handler := v_policy ->> 'handler';
  end if;

  perform geneva._complete_job(p_job_id);
  report := coalesce(report, false);
  workflow_state := v_workflow.state;
  return next;
end;
$$;

comment on function geneva.fail_step(bigint, text[], text, text, text, interval, boolean, bigint, text[], interval) is
'Worker protocol: records a step''s error, resolves the exception policy and schedules what comes next.';
