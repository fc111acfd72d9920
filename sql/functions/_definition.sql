-- geneva._definition: the definition of a workflow type, or a row of NULLs
-- when the type is not registered (callers treat its steps as undefined).
--
-- Called by: every function that schedules or resolves policies. Takes no
-- locks.
create or replace function geneva._definition(p_workflow_type text)
returns geneva.workflow_definitions
language sql
stable
set search_path = ''
as $$
  select d.* from geneva.workflow_definitions d where d.workflow_type = p_workflow_type
$$;
