-- geneva._trg_workflows_count_inserted: counts a workflow inserted already
-- ended (history imported; geneva.create_workflow inserts ongoing ones, which
-- cost nothing here) in geneva.ended_workflow_count_deltas, for
-- geneva.workflow_counts.
--
-- The trigger's WHEN clause picks the rows: any other write to a workflow
-- costs an expression, not a call.
-- Fired by: the trigger workflows_count_inserted, after insert on
-- geneva.workflows, for each row inserted ended.
create or replace function geneva._trg_workflows_count_inserted()
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

create or replace trigger workflows_count_inserted
after insert on geneva.workflows
for each row
-- (finished or canceled: workflows_state_valid ties each to its timestamp)
when (new.finished_at is not null or new.canceled_at is not null)
execute function geneva._trg_workflows_count_inserted();
