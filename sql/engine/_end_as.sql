-- geneva._end_as: ends an execution as geneva._signal_effects' row for the
-- cause and signal says (its execution state and outcome, its metadata merged
-- with p_metadata), for the ends whose workflow move the caller makes itself
-- or none: a stray execution (cause stray: a late job, report or give-back
-- finds its workflow ended or no longer performing), an operator's cancel of
-- an active execution (cause operator), housekeeping's repair of an orphan's
-- execution (cause repair, signal orphan), and what start_steps records
-- instead of starting a step (cause precondition; p_error_message says why a
-- step is not defined) or when an awaited event did not come in time (cause
-- timeout).
--
-- Called by: start_steps (stray, precondition, timeout);
-- geneva._advance_many, schedule_step (operator cancel);
-- geneva._repair_orphan. The caller holds the workflow lock, then the
-- execution lock, and has checked that the execution is active.
-- Returns the outcome recorded.
-- Raises: P0002 (no_data_found, from strict) for a cause and signal with no
-- row: a bug, never the caller's input.
create or replace function geneva._end_as(
  p_execution geneva.step_executions,
  p_cause text,
  p_signal text,
  p_metadata jsonb default null,
  p_error_message text default null
)
returns text
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_effect record;
begin
  select e.execution_state, e.outcome, e.metadata into strict v_effect
  from geneva._signal_effects() e
  where e.cause = p_cause and e.signal = p_signal;
  perform geneva._end_execution(
    p_execution, v_effect.execution_state, v_effect.outcome,
    p_error_message => p_error_message,
    p_metadata => case
      when v_effect.metadata is null and p_metadata is null then null
      else coalesce(v_effect.metadata, '{}') || coalesce(p_metadata, '{}')
    end
  );
  return v_effect.outcome;
end;
$$;
