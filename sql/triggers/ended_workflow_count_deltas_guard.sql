-- geneva._trg_ended_workflow_count_deltas_guard: refuses writing the counts'
-- deltas by hand, for every role, the owner included: rows are appended only
-- by the count triggers on geneva.workflows (workflows_count_*, inside a
-- trigger: pg_trigger_depth() > 0) and deleted only by
-- geneva._fold_workflow_counts (the setting geneva.folding = 'on'); a hand
-- edit would make geneva.workflow_counts lie.
--
-- The rule is the trigger's WHEN clause: the function runs only to refuse.
-- Raises: 55000.
create or replace function geneva._trg_ended_workflow_count_deltas_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'the counts of ended workflows cannot be changed by hand (%)', lower(tg_op)
    using errcode = '55000',
          hint = 'They follow the workflows; geneva.housekeep folds them.',
          table = 'ended_workflow_count_deltas';
end;
$$;

create or replace trigger ended_workflow_count_deltas_guard
before insert or update or delete on geneva.ended_workflow_count_deltas
for each row
when (
  pg_catalog.pg_trigger_depth() < 1
  and pg_catalog.current_setting('geneva.folding', true) is distinct from 'on'
)
execute function geneva._trg_ended_workflow_count_deltas_guard();
