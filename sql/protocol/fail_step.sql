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
-- What the error does is geneva._exception_effect's to decide (the policy
-- that applies, geneva._resolve_policy; its action, or once a reattempt
-- policy's cap of consecutive exception reattempts is reached its
-- terminal_action, pause by default; a reattempt's wait and backoff; whether
-- to report), and geneva._signal_effects' row (cause exception or
-- exhausted) what that does to the execution and the workflow. A running
-- step's error ends through geneva._end_running as a batch of one (a
-- failure element), as every end of a running execution does; a
-- precondition's error ends a scheduled execution (geneva._end_execution,
-- geneva._advance). The error columns are written in every case. When the
-- policy names a handler, nothing is recorded and the result says which
-- handler to run; the worker runs it and calls fail_step again with its
-- decision in p_handler_signal ('reattempt' with p_handler_wait, 'skip',
-- 'cancel', 'pause' (also for no decision) or 'finished'); a handler's
-- reattempts have no cap. An operator's pause or cancel requested while the
-- step ran applies now (see geneva._advance).
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
  v_locked record;
  v_execution geneva.step_executions;
  v_workflow geneva.workflows;
  v_definition geneva.workflow_definitions;
  v_effect record;
  v_end record;
  v_error_chain text[] := case
    when cardinality(p_error_chain) > 0 then p_error_chain
    else p_error_classes
  end;
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

  -- a running step's error: an end like any other (geneva._end_running)
  if not coalesce(p_precondition, false) then
    return query
    select c.action, c.outcome, coalesce(c.report, false), c.workflow_state, c.handler
    from geneva._end_running(
      array[p_execution_id], array['exception'], array[p_handler_signal], array[p_handler_wait],
      array[p_job_id], array[false], false,
      array[jsonb_strip_nulls(jsonb_build_object(
        'classes', to_jsonb(p_error_classes),
        'chain', to_jsonb(v_error_chain),
        'message', p_error_message,
        'backtrace', p_error_backtrace,
        'wait_at_least', p_wait_at_least
      ))]
    ) c;
    return;
  end if;

  -- a precondition's error, before the step started
  v_locked := geneva._lock_execution(p_execution_id);
  perform geneva._check_job(v_locked.o_execution, p_job_id);
  v_workflow := v_locked.o_workflow;
  v_execution := v_locked.o_execution;

  -- guard: it applies only to a scheduled execution of a ready workflow;
  -- otherwise the execution moved on: record nothing
  if v_execution.state <> 'scheduled' or v_workflow.state <> 'ready' then
    null;
  elsif v_execution.scheduled_for > v_now then
    -- guard: an early job leaves the execution for a job at its time
    perform geneva._ensure_job(v_workflow, v_execution);
  else
    v_definition := geneva._definition(v_workflow.workflow_type);
    v_effect := geneva._exception_effect(
      v_definition, v_execution.step_name, p_error_classes,
      geneva._exception_reattempts(v_workflow.id, v_execution.step_name),
      p_handler_signal, p_handler_wait, p_wait_at_least, p_precondition => true
    );

    -- guard: a handler decides in Go; ask for its decision first (nothing is
    -- recorded and the job stays the worker's until it calls again)
    if v_effect.signal is null then
      return query select 'handler'::text, null::text, false, v_workflow.state, v_effect.handler;
      return;
    end if;

    select e.execution_state, e.outcome, e.workflow_move, e.metadata into strict v_end
    from geneva._signal_effects() e
    where e.cause = v_effect.cause and e.signal = v_effect.signal;
    perform geneva._end_execution(
      v_execution, v_end.execution_state, v_end.outcome, v_error_chain[1], p_error_message, p_error_backtrace,
      coalesce(v_end.metadata, '{}') || v_effect.metadata, v_error_chain
    );
    v_workflow := geneva._advance(
      v_workflow, v_definition, v_end.workflow_move, v_execution.step_name, v_effect.wait, v_execution
    );

    action := v_effect.signal;
    outcome := v_end.outcome;
    report := v_effect.report;
    handler := v_effect.handler;
  end if;

  perform geneva._complete_job(p_job_id);
  report := coalesce(report, false);
  workflow_state := v_workflow.state;
  return next;
end;
$$;

comment on function geneva.fail_step(bigint, text[], text, text, text, interval, boolean, bigint, text[], interval) is
'Worker protocol: records a step''s error, resolves the exception policy and schedules what comes next.';
