-- geneva._trg_history_guard: history is written by the move and removed by
-- retention, whole partitions at a time (docs/history.md). Refused for every
-- role, the owner included (the others have no privilege on the tables at
-- all): inserting into geneva.workflows_history, step_executions_history or
-- events_history other than through geneva._move_to_history (which sets
-- geneva.moving to 'on', transaction-local, around its writes); updating or
-- deleting any of their rows (history does not change; retention drops or
-- detaches a partition, it deletes no row); writing geneva.history_counts
-- (the counts retention takes off workflow_counts) or
-- geneva.history_event_counts (the events geneva.event_stats counts in
-- history) other than through the move (and, for the events' counts of
-- history an earlier Geneva moved, geneva._history_event_counts_fill), or
-- deleting their rows other than
-- through retention (geneva._history_forget, geneva.retention 'on'). A
-- hand-written row would show a workflow that never ran, or make the counts
-- lie when its partition goes.
--
-- The rules are the triggers' WHEN clauses: the function runs only to
-- refuse. Row triggers on a partitioned table stand on each partition
-- (PostgreSQL clones them), so writing to a partition named directly is
-- refused too. TRUNCATE has its own guard (truncate_guard, on the parents
-- and on each partition: geneva._history_partition).
-- Fired by: the trigger history_guard, before insert, update or delete, for
-- each row, on the three history tables unless geneva.moving is 'on' (the
-- move inserts only), and on geneva.history_counts and history_event_counts
-- unless geneva.moving (the move's upsert) or geneva.retention (retention's
-- delete) is 'on'.
-- Raises: 55000, naming the table.
create or replace function geneva._trg_history_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'geneva.% cannot be % by hand', tg_table_name,
    case tg_op when 'INSERT' then 'inserted into' when 'UPDATE' then 'updated' else 'deleted from' end
    using errcode = '55000',
          hint = 'Housekeeping moves ended workflows into history (move_after) and drops or detaches whole partitions (retention, archive): geneva.set_housekeeping_settings.',
          table = tg_table_name;
end;
$$;

create or replace trigger history_guard
before insert or update or delete on geneva.workflows_history
for each row
when (pg_catalog.current_setting('geneva.moving', true) is distinct from 'on')
execute function geneva._trg_history_guard();

create or replace trigger history_guard
before insert or update or delete on geneva.step_executions_history
for each row
when (pg_catalog.current_setting('geneva.moving', true) is distinct from 'on')
execute function geneva._trg_history_guard();

create or replace trigger history_guard
before insert or update or delete on geneva.events_history
for each row
when (pg_catalog.current_setting('geneva.moving', true) is distinct from 'on')
execute function geneva._trg_history_guard();

create or replace trigger history_guard
before insert or update or delete on geneva.history_counts
for each row
when (
  pg_catalog.current_setting('geneva.moving', true) is distinct from 'on'
  and pg_catalog.current_setting('geneva.retention', true) is distinct from 'on'
)
execute function geneva._trg_history_guard();

create or replace trigger history_guard
before insert or update or delete on geneva.history_event_counts
for each row
when (
  pg_catalog.current_setting('geneva.moving', true) is distinct from 'on'
  and pg_catalog.current_setting('geneva.retention', true) is distinct from 'on'
)
execute function geneva._trg_history_guard();
