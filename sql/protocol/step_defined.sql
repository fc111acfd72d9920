-- geneva.step_defined: whether the registered definition of a workflow type
-- has a step of that name.
--
-- Called by: a worker whose own definition lacks the workflow type or the
-- step of a job it received (a deploy in progress: a newer worker registered
-- it). When the database has the step, the worker gives the job back for a
-- newer worker; when it does not, geneva.start_step records the execution as
-- failed/step_not_defined. Takes no locks.
-- Returns false for an unknown type or step, and for NULLs.
create or replace function geneva.step_defined(p_workflow_type text, p_step_name text)
returns boolean
language sql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
  select coalesce(
    (select p_step_name = any (d.step_names) from geneva.workflow_definitions d where d.workflow_type = p_workflow_type),
    false
  );
$$;

comment on function geneva.step_defined(text, text) is
'Worker protocol: whether the registered definition of a workflow type has the named step.';
