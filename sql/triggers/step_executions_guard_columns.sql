-- geneva._trg_step_executions_guard_columns: refuses what no engine function
-- does to an execution row's columns, for every role, the owner included
-- (the others have no privilege on the table at all): changing its identity
-- (id, workflow, step name, attempt, the execution it continues,
-- created_at), and updating an ended execution at all, even to the values
-- it has (its facts are history, and the dashboards' counts were taken
-- from them when it ended, by geneva._end_executions). See
-- step_executions_guard_insert and _delete for the rest.
--
-- The trigger's WHEN clause holds the rule, so that the function (which only
-- raises, with what was refused) runs only for an update it refuses: the
-- engine's own updates, one per step and more, cost an expression, not a
-- call.
-- Fires before step_executions_guard_state (triggers fire in name order).
-- Fired by: the trigger step_executions_guard_columns, before update on
-- geneva.step_executions, for each row whose identity changes or that had
-- ended.
-- Raises: 55000, naming the execution and what was refused.
create or replace function geneva._trg_step_executions_guard_columns()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if (new.id, new.workflow_id, new.step_name, new.attempt, new.continues_from_id, new.created_at)
    is distinct from (old.id, old.workflow_id, old.step_name, old.attempt, old.continues_from_id, old.created_at) then
    raise exception 'step execution % cannot change its id, workflow, step, attempt, continues_from_id or created_at', old.id
      using errcode = '55000',
            hint = 'Executions are created and ended by the geneva functions.',
            table = 'step_executions';
  end if;
  if old.state not in ('scheduled', 'in_progress') then
    raise exception 'step execution % has ended (% %) and cannot change', old.id, old.state, old.outcome
      using errcode = '55000',
            hint = 'An ended execution is history.',
            table = 'step_executions';
  end if;
  return new;
end;
$$;

create or replace trigger step_executions_guard_columns
before update on geneva.step_executions
for each row
when (
  (new.id, new.workflow_id, new.step_name, new.attempt, new.continues_from_id, new.created_at)
    is distinct from (old.id, old.workflow_id, old.step_name, old.attempt, old.continues_from_id, old.created_at)
  -- ended (step_executions_state_valid ties finished_at to an outcome)
  or old.finished_at is not null
)
execute function geneva._trg_step_executions_guard_columns();
