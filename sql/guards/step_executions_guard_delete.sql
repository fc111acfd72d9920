-- geneva._trg_step_executions_guard_delete: refuses deleting an execution
-- other than with its workflow through housekeeping's retention (the setting
-- geneva.retention = 'on', see workflows_guard_delete), for every role, the
-- owner included.
--
-- The rule is the trigger's WHEN clause: the function runs only to refuse.
-- Fired by: the trigger step_executions_guard_delete, before delete on
-- geneva.step_executions, for each row, unless geneva.retention is 'on'.
-- Raises: 55000, naming the execution.
create or replace function geneva._trg_step_executions_guard_delete()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'step execution % cannot be deleted by hand', old.id
    using errcode = '55000',
          hint = 'Executions are deleted with their workflow by geneva.housekeep''s retention.',
          table = 'step_executions';
end;
$$;

create or replace trigger step_executions_guard_delete
before delete on geneva.step_executions
for each row
when (pg_catalog.current_setting('geneva.retention', true) is distinct from 'on')
execute function geneva._trg_step_executions_guard_delete();
