-- geneva._trg_step_executions_guard_ended: refuses any update of an ended
-- execution, even to the values it has, for every role, the owner included:
-- its facts are history, and the dashboards' counts were taken from them
-- when it ended (geneva._end_executions).
--
-- The trigger's WHEN clause holds the rule (an ended execution is one with
-- a finished_at: the CHECK constraint step_executions_state_valid ties it to
-- the outcome), so that the function runs only to refuse, and the engine's
-- own updates cost a null test.
-- Fires after step_executions_guard_columns and before _state (triggers
-- fire in name order).
-- Fired by: the trigger step_executions_guard_ended, before update on
-- geneva.step_executions, for each row that had ended.
-- Raises: 55000, naming the execution, its state and its outcome.
create or replace function geneva._trg_step_executions_guard_ended()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'step execution % has ended (% %) and cannot change', old.id, old.state, old.outcome
    using errcode = '55000',
          hint = 'An ended execution is history.',
          table = 'step_executions';
end;
$$;

create or replace trigger step_executions_guard_ended
before update on geneva.step_executions
for each row
when (old.finished_at is not null)
execute function geneva._trg_step_executions_guard_ended();
