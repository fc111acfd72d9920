-- geneva._trg_workflows_count_deleted: counts an ended workflow deleted
-- (housekeeping's retention) in geneva.ended_workflow_count_deltas, for
-- geneva.workflow_counts. A workflow moved into history
-- (geneva._move_to_history, geneva.moving 'on') is not deleted: it is
-- counted until its partition is dropped.
--
-- The trigger's WHEN clause picks the rows: any other write to a workflow
-- costs an expression, not a call.
-- Fired by: the trigger workflows_count_deleted, after delete on
-- geneva.workflows, for each ended row.
create or replace function geneva._trg_workflows_count_deleted()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  insert into geneva.ended_workflow_count_deltas (workflow_type, state, delta)
  values (old.workflow_type, old.state, -1);
  return null;
end;
$$;

create or replace trigger workflows_count_deleted
after delete on geneva.workflows
for each row
when (old.state in ('finished', 'canceled') and pg_catalog.current_setting('geneva.moving', true) is distinct from 'on')
execute function geneva._trg_workflows_count_deleted();
