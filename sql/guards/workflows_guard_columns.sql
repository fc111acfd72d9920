-- geneva._trg_workflows_guard_columns: refuses what no engine function does
-- to a workflow row's identity (id, workflow type, hero, allow_multiple,
-- created_at, retried_from, started_version, parent_id, root_id, child_key), for every
-- role, the owner included (the others have no privilege on the table at
-- all). See workflows_guard_insert and _delete for
-- the rest.
--
-- The rule is the trigger's WHEN clause: the function runs only to refuse.
-- The trigger is for updates that set one of those columns (no engine
-- function does), so the engine's own updates skip it before PostgreSQL
-- reads the clause, which it does anew for every statement that fires it.
-- Fired by: the trigger workflows_guard_columns, before an update of one of
-- those columns of geneva.workflows, for each row whose identity changes.
-- Raises: 55000, naming the workflow.
create or replace function geneva._trg_workflows_guard_columns()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'workflow % cannot change its id, type, hero, allow_multiple, created_at, retried_from, started_version or parent', old.id
    using errcode = '55000',
          hint = 'Create a new workflow with geneva.create_workflow.',
          table = 'workflows';
end;
$$;

create or replace trigger workflows_guard_columns
before update of id, workflow_type, hero_type, hero_id, allow_multiple, created_at, retried_from, started_version,
  parent_id, root_id, child_key
on geneva.workflows
for each row
when (
  (new.id, new.workflow_type, new.hero_type, new.hero_id, new.allow_multiple, new.created_at, new.retried_from,
    new.started_version, new.parent_id, new.root_id, new.child_key)
    is distinct from (old.id, old.workflow_type, old.hero_type, old.hero_id, old.allow_multiple, old.created_at,
    old.retried_from, old.started_version, old.parent_id, old.root_id, old.child_key)
)
execute function geneva._trg_workflows_guard_columns();
