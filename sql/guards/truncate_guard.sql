-- geneva._trg_truncate_guard: refuses TRUNCATE of the engine's tables, for
-- every role, the owner included (the others have no privilege on them at
-- all). No function truncates: a truncate would delete every workflow, every
-- execution, every definition or the kept counts at once, without the row
-- triggers that guard DELETE (workflows_guard_delete,
-- step_executions_guard_delete, workflow_definitions_guard, counts_guard)
-- ever firing, and leave River's jobs naming executions that are gone.
--
-- One statement-level BEFORE TRUNCATE trigger on each table. The owner can
-- still disable triggers: the guard is against mistakes and stray scripts,
-- not against the owner.
-- Fired by: the trigger truncate_guard, before truncate, for each
-- statement, on geneva.workflows, step_executions, workflow_definitions,
-- workflow_definition_versions,
-- housekeeping_rounds, housekeeping_settings, events, schedules,
-- schedule_firings, operator_actions, idempotency_keys, runaways, the kept counts'
-- five tables, the history tables (workflows_history, step_executions_history,
-- events_history: the parents here, each partition as
-- geneva._history_partition creates it), history_counts and
-- history_event_counts.
-- Raises: 55000, naming the table.
create or replace function geneva._trg_truncate_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'geneva.% cannot be truncated', tg_table_name
    using errcode = '55000',
          hint = 'Workflows and their executions are deleted by geneva.housekeep''s retention; cancel workflows with geneva.cancel_workflow.',
          table = tg_table_name;
end;
$$;

create or replace trigger truncate_guard
before truncate on geneva.workflows
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.step_executions
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.workflow_definitions
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.workflow_definition_versions
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.housekeeping_rounds
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.ended_workflow_counts
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.ended_workflow_count_deltas
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.ended_execution_deltas
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.ended_executions_by_minute
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.ended_executions_by_hour
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.housekeeping_settings
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.events
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.schedules
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.schedule_firings
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.operator_actions
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.idempotency_keys
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.limits
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.limit_keys
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.limit_slots
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.limit_windows
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.runaways
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.workflows_history
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.step_executions_history
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.events_history
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.history_counts
for each statement
execute function geneva._trg_truncate_guard();

create or replace trigger truncate_guard
before truncate on geneva.history_event_counts
for each statement
execute function geneva._trg_truncate_guard();
