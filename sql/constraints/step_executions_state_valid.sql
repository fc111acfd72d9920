-- geneva._chk_step_executions_state_valid: the rules of an execution's row,
-- which the CHECK constraint step_executions_state_valid holds every writer
-- to: its state, and which outcomes each state may carry, each allowed pair
-- an element "state:outcome" of one constant list (an active state,
-- scheduled or in_progress, carries none, so stands alone); finished_at set
-- exactly on ended executions, which are those with an outcome; a step name
-- and an attempt from 1; an awaited event's name, wait start and timeout set
-- together, the start no later than the timeout; a slot of a limit waited
-- for (limit_wait_key) only while scheduled (step_executions_limit_waiting
-- relies on it).
--
-- A function, not the rules written in the CHECK, for the reasons
-- geneva._chk_workflows_state_valid gives (a CHECK's stored expression is
-- read and prepared for every statement that writes the table, and this
-- list alone was 4 KB of it, read a byte at a time); for the same reasons
-- it has no `set search_path`.
--
-- Called by: the CHECK constraint step_executions_state_valid, attached
-- below once (after a change of these rules, drop it in install.sql's
-- graveyard so that it is attached and checked anew).
create or replace function geneva._chk_step_executions_state_valid(
  p_state text,
  p_outcome text,
  p_finished_at timestamptz,
  p_step_name text,
  p_attempt integer,
  p_await_event text,
  p_await_from timestamptz,
  p_await_until timestamptz,
  p_limit_wait_key text
)
returns boolean
language plpgsql
immutable
parallel safe
as $$
begin
  return p_state || coalesce(':' || p_outcome, '') = any ('{
      scheduled,
      in_progress,
      completed:success, completed:reattempted, completed:reattempted_by_exception,
      completed:recovered, completed:suspended,
      failed:paused_by_exception, failed:canceled_by_exception, failed:reattempts_exhausted,
      failed:step_not_defined,
      canceled:canceled_by_condition, canceled:canceled_by_flow_control, canceled:canceled_externally,
      canceled:canceled_hero_missing, canceled:paused_by_flow_control, canceled:recovered,
      canceled:canceled_by_timeout, canceled:paused_by_timeout, canceled:canceled_by_event,
      skipped:skipped_by_condition, skipped:skipped_by_flow_control, skipped:skipped_by_exception,
      skipped:skipped_externally, skipped:skipped_by_timeout
    }'::text[])
    and (p_finished_at is null) = (p_outcome is null)
    and p_step_name <> '' and p_attempt > 0
    and (p_await_event is null) = (p_await_from is null) and (p_await_event is null) = (p_await_until is null)
    and (p_await_event is null or p_await_from <= p_await_until)
    and (p_limit_wait_key is null or p_state = 'scheduled');
end;
$$;

do $$
begin
  if not exists (
    select from pg_catalog.pg_constraint c
    where c.conrelid = 'geneva.step_executions'::pg_catalog.regclass and c.conname = 'step_executions_state_valid'
  ) then
    alter table geneva.step_executions add constraint step_executions_state_valid check (geneva._chk_step_executions_state_valid(
      state, outcome, finished_at, step_name, attempt, await_event, await_from, await_until, limit_wait_key
    ));
  end if;
end
$$;
