-- geneva._trg_count_deltas_guard: refuses writing the deltas of the kept
-- counts by hand, for every role, the owner included:
-- ended_workflow_count_deltas (migration 006) and ended_execution_deltas
-- (migration 007). Rows are appended only by the count triggers on
-- geneva.workflows (workflows_count_*) and geneva.step_executions
-- (step_executions_count_*), inside a trigger (pg_trigger_depth() > 0), and
-- deleted only by housekeeping's folds (the setting geneva.folding = 'on'); a
-- hand edit would make geneva.workflow_counts, geneva.step_stats,
-- geneva.step_throughput and geneva.engine_metrics lie.
--
-- The rule is the trigger's WHEN clause: the function runs only to refuse.
-- The one trigger stands on each delta table.
-- Raises: 55000.
create or replace function geneva._trg_count_deltas_guard()
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

create or replace trigger count_deltas_guard
before insert or update or delete on geneva.ended_workflow_count_deltas
for each row
when (
  pg_catalog.pg_trigger_depth() < 1
  and pg_catalog.current_setting('geneva.folding', true) is distinct from 'on'
)
execute function geneva._trg_count_deltas_guard();

create or replace trigger count_deltas_guard
before insert or update or delete on geneva.ended_execution_deltas
for each row
when (
  pg_catalog.pg_trigger_depth() < 1
  and pg_catalog.current_setting('geneva.folding', true) is distinct from 'on'
)
execute function geneva._trg_count_deltas_guard();
