-- geneva._definition: the definition of a workflow type, or a row of NULLs
-- when the type is not registered (callers treat its steps as undefined).
--
-- Called by: every function that schedules or resolves policies. Takes no
-- locks. (PL/pgSQL: see geneva._complete_job.)
create or replace function geneva._definition(p_workflow_type text)
returns geneva.workflow_definitions
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_definition geneva.workflow_definitions;
begin
  select d.* into v_definition from geneva.workflow_definitions d where d.workflow_type = p_workflow_type;
  return v_definition;
end;
$$;
