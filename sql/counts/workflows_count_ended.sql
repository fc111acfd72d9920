-- geneva._trg_workflows_count_ended: counts a workflow that ends (finished or
-- canceled: it never leaves them, see workflows_guard_state) in
-- geneva.ended_workflow_count_deltas, for geneva.workflow_counts.
--
-- The trigger's WHEN clause picks the rows: any other write to a workflow
-- costs an expression, not a call.
-- Fired by: the trigger workflows_count_ended, after update on
-- geneva.workflows, for each row that ends.
create or replace function geneva._trg_workflows_count_ended()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  insert into geneva.ended_workflow_count_deltas (workflow_type, state, delta)
  values (new.workflow_type, new.state, 1);
  return null;
end;
$$;

create or replace trigger workflows_count_ended
after update on geneva.workflows
for each row
-- (finished or canceled: workflows_state_valid ties each to its timestamp)
when (
  old.finished_at is null and old.canceled_at is null
  and (new.finished_at is not null or new.canceled_at is not null)
)
execute function geneva._trg_workflows_count_ended();
