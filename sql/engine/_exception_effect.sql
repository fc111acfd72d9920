-- geneva._exception_effect: what a step's error does, decided in one place:
-- given the definition and step (whose on_exception policies apply,
-- geneva._resolve_policy), the error's class names (p_error_classes, as
-- fail_step takes them), how many consecutive exception reattempts the step
-- has had (p_reattempts: geneva._exception_reattempts) and a handler's
-- decision, if one was asked for, it returns the end to record: the cause
-- and signal of geneva._signal_effects' row (exception, or exhausted once a
-- reattempt policy's cap is reached), the wait of a reattempt, the metadata
-- to merge into the ended execution, whether to report the error, and the
-- handler the policy names.
--
-- Per policy:
--   a handler: without a decision (p_decision NULL) the signal is NULL:
--     nothing is to be recorded yet, the worker runs the handler and reports
--     again with its decision ('reattempt' with p_decision_wait, 'skip',
--     'cancel', 'pause' or 'finished'); a handler's reattempts have no cap;
--   otherwise its action (pause, cancel, skip, reattempt); a reattempt waits
--     the policy's wait, growing with its backoff (geneva._backoff_wait),
--     unless the step's consecutive reattempts reached the cap: then the
--     policy's terminal_action (pause by default) with cause exhausted.
-- A reattempt waits at least p_wait_at_least (an HTTP reply's Retry-After;
-- recorded as metadata.wait_at_least) and records its reattempt_reason
-- (precondition, for p_precondition, else exception_policy). Only a signal
-- that runs the same step again has a wait. The metadata holds the error
-- classes and the policy (with its level and cap), and, once exhausted, the
-- consecutive reattempts.
--
-- Called by: geneva._end_running (a running step's failure, for fail_step
-- and complete_steps) and fail_step (a precondition's). Reads only its
-- arguments (and geneva._signal_effects); takes no locks.
-- Raises: 22023 for a handler's decision when the policy that applies
-- names no handler.
create or replace function geneva._exception_effect(
  p_definition geneva.workflow_definitions,
  p_step_name text,
  p_error_classes text[],
  p_reattempts integer,
  p_decision text default null,
  p_decision_wait interval default null,
  p_wait_at_least interval default null,
  p_precondition boolean default false,
  out cause text,
  out signal text,
  out wait interval,
  out metadata jsonb,
  out report boolean,
  out handler text
)
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_policy jsonb := geneva._resolve_policy(p_definition, p_step_name, p_error_classes);
  v_cap integer;
  v_outcome text;
  v_move text;
begin
  cause := 'exception';
  handler := v_policy ->> 'handler';
  if handler is not null then
    -- the handler decides, in Go: asked first, then told
    if p_decision is null then
      return;
    end if;
    signal := p_decision;
    wait := p_decision_wait;
  elsif p_decision is not null then
    raise exception 'step % has no handler policy for this error', p_step_name
      using errcode = '22023',
            detail = format('The policy that applies is %s.', v_policy),
            hint = 'Report the error without a handler decision.';
  else
    signal := v_policy ->> 'action';
    wait := case when v_policy ? 'wait' then geneva._parse_wait(v_policy -> 'wait', 'policy') end;
    v_cap := (v_policy ->> 'cap')::integer;
  end if;

  metadata := jsonb_build_object(
    'error_classes', to_jsonb(coalesce(p_error_classes, '{}')),
    'policy', v_policy
  );

  -- the reattempt cap and the backoff count the step's consecutive
  -- exception reattempts
  if signal = 'reattempt' and (v_cap is not null or v_policy ? 'backoff') then
    if p_reattempts >= v_cap then
      cause := 'exhausted';
      signal := coalesce(v_policy ->> 'terminal_action', 'pause');
      metadata := metadata || jsonb_build_object('consecutive_reattempts', p_reattempts);
    elsif v_policy ? 'backoff' then
      wait := geneva._backoff_wait(v_policy, p_reattempts);
    end if;
  end if;

  select e.outcome, e.workflow_move into v_outcome, v_move
  from geneva._signal_effects() e
  where e.cause = _exception_effect.cause and e.signal = _exception_effect.signal;
  if v_move = 'same' then
    metadata := metadata || jsonb_build_object(
      'reattempt_reason', case when p_precondition then 'precondition' else 'exception_policy' end
    );
    -- the error asked for a longer wait (an HTTP reply's Retry-After)
    if p_wait_at_least > coalesce(wait, interval '0') then
      wait := p_wait_at_least;
      metadata := metadata || jsonb_build_object('wait_at_least', p_wait_at_least);
    end if;
  else
    wait := null;
  end if;

  report := case coalesce(v_policy ->> 'report', 'always')
    when 'never' then false
    when 'terminal_only' then v_outcome is distinct from 'reattempted_by_exception'
    else true
  end;
end;
$$;
