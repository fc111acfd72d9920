-- geneva._trg_workflows_guard_insert: refuses inserting an ongoing workflow
-- (ready, performing, paused) other than through geneva.create_workflow,
-- which sets geneva.inserting to 'on' (transaction-local) around its
-- statement only, for every role, the owner included; ended history may be
-- inserted (an import, the benchmark's fill).
--
-- The rule is the trigger's WHEN clause: the function runs only to refuse.
-- Fired by: the trigger workflows_guard_insert, before insert on
-- geneva.workflows, for each ongoing row, unless geneva.inserting is 'on'.
-- Raises: 55000.
create or replace function geneva._trg_workflows_guard_insert()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'an ongoing workflow cannot be inserted by hand'
    using errcode = '55000',
          hint = 'Create workflows with geneva.create_workflow.',
          table = 'workflows';
end;
$$;

create or replace trigger workflows_guard_insert
before insert on geneva.workflows
for each row
when (
  -- ongoing (workflows_state_valid ties finished and canceled to their timestamps)
  new.finished_at is null and new.canceled_at is null
  and pg_catalog.current_setting('geneva.inserting', true) is distinct from 'on'
)
execute function geneva._trg_workflows_guard_insert();
