-- geneva._trg_workflow_definitions_guard: definitions, and their versions,
-- are written only by geneva.define_workflow, which validates them and
-- derives step_names, step_waits and the rest; refused for every role, the
-- owner included, otherwise (the others have no privilege on the tables at
-- all). No function deletes a definition; define_workflow deletes a type's
-- versions past the latest 100.
--
-- geneva.define_workflow sets geneva.defining to 'on' (transaction-local)
-- for its write only. The owner could set it too: the guard is against
-- mistakes, not against the owner, who can always disable triggers.
-- Fired by: the trigger workflow_definitions_guard, before insert,
-- update or delete on geneva.workflow_definitions and
-- geneva.workflow_definition_versions, for each row.
-- Raises: 55000, naming the workflow type.
create or replace function geneva._trg_workflow_definitions_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if (tg_op = 'DELETE' and tg_table_name = 'workflow_definitions')
    or pg_catalog.current_setting('geneva.defining', true) is distinct from 'on' then
    raise exception 'the definition of % cannot be % by hand',
      case when tg_op = 'INSERT' then new.workflow_type else old.workflow_type end,
      case tg_op when 'INSERT' then 'inserted' when 'UPDATE' then 'updated' else 'deleted' end
      using errcode = '55000',
            hint = 'Define workflows with geneva.define_workflow (the Go worker does it at start-up).',
            table = 'workflow_definitions';
  end if;
  if tg_op = 'DELETE' then
    return old;
  end if;
  return new;
end;
$$;

create or replace trigger workflow_definitions_guard
before insert or update or delete on geneva.workflow_definitions
for each row
execute function geneva._trg_workflow_definitions_guard();

create or replace trigger workflow_definitions_guard
before insert or update or delete on geneva.workflow_definition_versions
for each row
execute function geneva._trg_workflow_definitions_guard();
