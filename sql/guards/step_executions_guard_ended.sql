-- geneva._trg_step_executions_guard_ended: refuses any update of an ended
-- execution, even to the values it has, for every role, the owner included:
-- its facts are history, and the dashboards' counts were taken from them
-- when it ended (geneva._end_executions).
--
-- The trigger's WHEN clause holds the rule (an ended execution is one with
-- a finished_at: the CHECK constraint step_executions_state_valid ties it to
-- the outcome), so that the function runs only to refuse, and the engine's
-- own updates cost a null test.
-- An AFTER trigger, as are step_executions_guard_columns and _state: with
-- any BEFORE UPDATE row trigger on the table, PostgreSQL locks each row an
-- update changes before it fires the trigger (GetTupleForTrigger), and that
-- lock is a WAL record for every execution an end updates; the end needs no
-- lock of its execution (geneva._end_running). Fired after the row is
-- written, the trigger's error rolls the statement back all the same; a
-- hand write that also breaks a constraint (one active execution a
-- workflow, step_executions_state_valid) is refused by the constraint
-- first, with its own SQLSTATE.
-- Fires after step_executions_guard_columns and before _state (triggers
-- fire in name order).
-- Fired by: the trigger step_executions_guard_ended, after update on
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
after update on geneva.step_executions
for each row
when (old.finished_at is not null)
execute function geneva._trg_step_executions_guard_ended();
