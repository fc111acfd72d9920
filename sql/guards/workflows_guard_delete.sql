-- geneva._trg_workflows_guard_delete: refuses deleting a workflow other than
-- through housekeeping's retention, which sets geneva.retention to 'on'
-- (transaction-local) around its statement only, for every role, the owner
-- included; deleting a workflow deletes its executions with it.
--
-- The rule is the trigger's WHEN clause: the function runs only to refuse.
-- Fired by: the trigger workflows_guard_delete, before delete on
-- geneva.workflows, for each row, unless geneva.retention is 'on'.
-- Raises: 55000, naming the workflow.
create or replace function geneva._trg_workflows_guard_delete()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'workflow % cannot be deleted by hand', old.id
    using errcode = '55000',
          hint = 'Workflows are deleted by geneva.housekeep''s retention; cancel it with geneva.cancel_workflow.',
          table = 'workflows';
end;
$$;

create or replace trigger workflows_guard_delete
before delete on geneva.workflows
for each row
when (pg_catalog.current_setting('geneva.retention', true) is distinct from 'on')
execute function geneva._trg_workflows_guard_delete();
