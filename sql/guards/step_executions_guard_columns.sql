-- geneva._trg_step_executions_guard_columns: refuses what no engine function
-- does to an execution row's identity (id, workflow, step name, attempt, the
-- execution it continues, created_at), for every role, the owner included
-- (the others have no privilege on the table at all). See
-- step_executions_guard_ended, _insert and _delete for the rest.
--
-- The trigger's WHEN clause holds the rule, so that the function (which only
-- raises) runs only for an update it refuses; and the trigger is for
-- updates that set one of those columns (no engine function does), so the
-- engine's own updates skip it before PostgreSQL reads the clause, which it
-- does anew for every statement that fires it.
-- After the update, not before: see step_executions_guard_ended.
-- Fires before step_executions_guard_ended and _state (triggers fire in name
-- order).
-- Fired by: the trigger step_executions_guard_columns, after an update of
-- one of those columns of geneva.step_executions, for each row whose
-- identity changes.
-- Raises: 55000, naming the execution.
create or replace function geneva._trg_step_executions_guard_columns()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'step execution % cannot change its id, workflow, step, attempt, continues_from_id or created_at', old.id
    using errcode = '55000',
          hint = 'Executions are created and ended by the geneva functions.',
          table = 'step_executions';
end;
$$;

create or replace trigger step_executions_guard_columns
after update of id, workflow_id, step_name, attempt, continues_from_id, created_at on geneva.step_executions
for each row
when (
  (new.id, new.workflow_id, new.step_name, new.attempt, new.continues_from_id, new.created_at)
    is distinct from (old.id, old.workflow_id, old.step_name, old.attempt, old.continues_from_id, old.created_at)
)
execute function geneva._trg_step_executions_guard_columns();
