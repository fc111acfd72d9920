-- geneva._trg_workflows_guard_columns: refuses what no engine function does
-- to a workflow row, for every role, the owner included (the others have no
-- privilege on the table at all): changing its identity (id, workflow type,
-- hero, allow_multiple, created_at), deleting it other than through
-- housekeeping's retention, and inserting an ongoing one (ready, performing,
-- paused) other than through geneva.create_workflow (ended history may be
-- inserted: an import, the benchmark's fill).
--
-- geneva.housekeep sets geneva.retention, and geneva.create_workflow
-- geneva.inserting, to 'on' (transaction-local) around their statement only;
-- deleting a workflow deletes its executions with it.
-- Raises: 55000, naming the workflow and what was refused.
create or replace function geneva._trg_workflows_guard_columns()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if tg_op = 'INSERT' then
    if new.state not in ('finished', 'canceled')
      and pg_catalog.current_setting('geneva.inserting', true) is distinct from 'on' then
      raise exception 'an ongoing workflow cannot be inserted by hand'
        using errcode = '55000',
              hint = 'Create workflows with geneva.create_workflow.',
              table = 'workflows';
    end if;
    return new;
  end if;
  if tg_op = 'DELETE' then
    if pg_catalog.current_setting('geneva.retention', true) is distinct from 'on' then
      raise exception 'workflow % cannot be deleted by hand', old.id
        using errcode = '55000',
              hint = 'Workflows are deleted by geneva.housekeep''s retention; cancel it with geneva.cancel_workflow.',
              table = 'workflows';
    end if;
    return old;
  end if;

  if (new.id, new.workflow_type, new.hero_type, new.hero_id, new.allow_multiple, new.created_at)
    is distinct from (old.id, old.workflow_type, old.hero_type, old.hero_id, old.allow_multiple, old.created_at) then
    raise exception 'workflow % cannot change its id, type, hero, allow_multiple or created_at', old.id
      using errcode = '55000',
            hint = 'Create a new workflow with geneva.create_workflow.',
            table = 'workflows';
  end if;
  return new;
end;
$$;

create or replace trigger workflows_guard_columns
before insert or update or delete on geneva.workflows
for each row
execute function geneva._trg_workflows_guard_columns();
