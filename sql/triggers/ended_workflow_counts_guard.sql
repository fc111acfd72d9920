-- geneva._trg_ended_workflow_counts_guard: refuses writing the folded counts
-- of ended workflows by hand, for every role, the owner included: only
-- geneva._fold_workflow_counts writes them (the setting geneva.folding =
-- 'on'; migration 006 counted the history before this trigger existed).
--
-- The rule is the trigger's WHEN clause: the function runs only to refuse.
-- Raises: 55000.
create or replace function geneva._trg_ended_workflow_counts_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'the counts of ended workflows cannot be changed by hand (%)', lower(tg_op)
    using errcode = '55000',
          hint = 'They follow the workflows; geneva.housekeep folds them.',
          table = 'ended_workflow_counts';
end;
$$;

create or replace trigger ended_workflow_counts_guard
before insert or update or delete on geneva.ended_workflow_counts
for each row
when (pg_catalog.current_setting('geneva.folding', true) is distinct from 'on')
execute function geneva._trg_ended_workflow_counts_guard();
