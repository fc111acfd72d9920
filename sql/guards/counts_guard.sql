-- geneva._trg_counts_guard: refuses writing the kept counts by hand, for
-- every role, the owner included, on each of their tables: the folded counts
-- (ended_workflow_counts, ended_executions_by_minute and
-- ended_executions_by_hour), which only housekeeping's folds write
-- (geneva._fold_workflow_counts, geneva._fold_ended_executions: the setting
-- geneva.folding = 'on'; migrations/001_create_schema.sql creates them empty,
-- as it creates geneva.workflows, so there is no history to count before
-- this trigger stands), and their deltas (ended_workflow_count_deltas,
-- ended_execution_deltas), which the count triggers on geneva.workflows
-- (workflows_count_*) and geneva.step_executions
-- (step_executions_count_inserted) append, inside a trigger
-- (pg_trigger_depth() > 0), as does geneva._end_executions (the setting
-- geneva.ending = 'on'), and the folds delete. A
-- hand edit would make geneva.workflow_counts, geneva.step_stats,
-- geneva.step_throughput and geneva.engine_metrics lie.
--
-- The rules are the triggers' WHEN clauses: the function runs only to refuse.
-- The one trigger stands on each table.
-- Fired by: the trigger counts_guard, before insert, update or delete
-- on each of the five tables above, for each row, unless geneva.folding is
-- 'on' (on the deltas, also only outside a trigger and, on the executions'
-- deltas, while geneva.ending is not 'on').
-- Raises: 55000.
create or replace function geneva._trg_counts_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'the counts in % cannot be changed by hand (%)', tg_table_name, lower(tg_op)
    using errcode = '55000',
          hint = 'They follow the workflows and their executions; geneva.housekeep folds them.',
          table = tg_table_name;
end;
$$;

create or replace trigger counts_guard
before insert or update or delete on geneva.ended_workflow_counts
for each row
when (pg_catalog.current_setting('geneva.folding', true) is distinct from 'on')
execute function geneva._trg_counts_guard();

create or replace trigger counts_guard
before insert or update or delete on geneva.ended_executions_by_minute
for each row
when (pg_catalog.current_setting('geneva.folding', true) is distinct from 'on')
execute function geneva._trg_counts_guard();

create or replace trigger counts_guard
before insert or update or delete on geneva.ended_executions_by_hour
for each row
when (pg_catalog.current_setting('geneva.folding', true) is distinct from 'on')
execute function geneva._trg_counts_guard();

create or replace trigger counts_guard
before insert or update or delete on geneva.ended_workflow_count_deltas
for each row
when (
  pg_catalog.pg_trigger_depth() < 1
  and pg_catalog.current_setting('geneva.folding', true) is distinct from 'on'
)
execute function geneva._trg_counts_guard();

create or replace trigger counts_guard
before insert or update or delete on geneva.ended_execution_deltas
for each row
when (
  pg_catalog.pg_trigger_depth() < 1
  and pg_catalog.current_setting('geneva.folding', true) is distinct from 'on'
  and pg_catalog.current_setting('geneva.ending', true) is distinct from 'on'
)
execute function geneva._trg_counts_guard();
