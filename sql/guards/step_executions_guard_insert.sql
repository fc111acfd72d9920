-- geneva._trg_step_executions_guard_insert: refuses inserting an active
-- execution (scheduled, in_progress) other than through
-- geneva._insert_execution or the batch functions, which set geneva.inserting
-- to 'on' (transaction-local) around their statement only, for every role, the
-- owner included; ended history may be inserted.
--
-- The rule is the trigger's WHEN clause: the function runs only to refuse.
-- Fired by: the trigger step_executions_guard_insert, before insert on
-- geneva.step_executions, for each active row, unless geneva.inserting is
-- 'on'.
-- Raises: 55000.
create or replace function geneva._trg_step_executions_guard_insert()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'an active step execution cannot be inserted by hand'
    using errcode = '55000',
          hint = 'Executions are scheduled by the geneva functions (schedule_step, resume_workflow, …).',
          table = 'step_executions';
end;
$$;

create or replace trigger step_executions_guard_insert
before insert on geneva.step_executions
for each row
when (
  -- active (step_executions_state_valid ties finished_at to an outcome)
  new.finished_at is null
  and pg_catalog.current_setting('geneva.inserting', true) is distinct from 'on'
)
execute function geneva._trg_step_executions_guard_insert();
