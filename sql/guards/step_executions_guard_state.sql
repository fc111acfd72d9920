-- geneva._trg_step_executions_guard_state: refuses illegal execution
-- transitions and rewrites of history, so that hand-written SQL cannot
-- corrupt a workflow (e.g. completed back to scheduled). The engine's
-- functions only make legal ones and pass through.
--
-- Legal: scheduled -> in_progress, completed, failed, canceled, skipped;
-- in_progress -> completed, failed, canceled, skipped. An ended execution
-- keeps its state and outcome. An execution ends only through
-- geneva._end_executions, which sets geneva.ending to 'on' (transaction-local)
-- around its update: ending one by hand would leave its workflow waiting for
-- nothing (a ready workflow without a scheduled execution).
-- The trigger's WHEN clause holds the rule too, so that the function runs
-- only for a transition it refuses: the engine's own cost an expression.
-- It names the illegal changes (from an ended execution, back to
-- scheduled, an end without geneva.ending) and reads an ended execution
-- from its finished_at, which the CHECK constraint
-- step_executions_state_valid ties to its outcome: the clause is read and
-- prepared anew for every statement that updates the table, and one
-- without a list of text constants is read in a fraction of the time.
-- After the update, not before: see step_executions_guard_ended.
-- Fired by: the trigger step_executions_guard_state, after update of
-- state, outcome on geneva.step_executions, for each row whose transition is
-- illegal.
-- Raises: 55000, naming the execution and both states.
create or replace function geneva._trg_step_executions_guard_state()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if old.state not in ('scheduled', 'in_progress')
    or new.state = 'scheduled'
    or (old.state = 'in_progress' and new.state = 'in_progress') then
    raise exception 'step execution % cannot go from % (%) to % (%)',
      old.id, old.state, coalesce(old.outcome, 'no outcome'), new.state, coalesce(new.outcome, 'no outcome')
      using errcode = '55000',
            hint = 'Executions move forward only; the geneva functions record their ends.',
            table = 'step_executions';
  end if;
  if new.state not in ('scheduled', 'in_progress')
    and pg_catalog.current_setting('geneva.ending', true) is distinct from 'on' then
    raise exception 'step execution % cannot be ended (%) by hand', old.id, new.state
      using errcode = '55000',
            hint = 'The geneva functions end executions (complete_step, fail_step, cancel_workflow, skip_step, housekeep).',
            table = 'step_executions';
  end if;
  return null;
end;
$$;

create or replace trigger step_executions_guard_state
after update of state, outcome on geneva.step_executions
for each row
when (
  (old.state is distinct from new.state or old.outcome is distinct from new.outcome)
  and (
    -- ended (step_executions_state_valid ties finished_at to an outcome)
    old.finished_at is not null
    or new.state = 'scheduled'
    or new.finished_at is not null and pg_catalog.current_setting('geneva.ending', true) is distinct from 'on'
  )
)
execute function geneva._trg_step_executions_guard_state();
