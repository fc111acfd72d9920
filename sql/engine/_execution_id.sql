-- geneva._execution_id: a new step execution's id (its workflow_id).
--
-- The next value of geneva.step_executions_id_seq. The argument is for a
-- cell (docs/cells.md): there sql/cell/_execution_id.sql replaces this
-- function with one whose ids carry their workflow's partition. In a single
-- database the argument is unused and ids are the sequence's, as before.
--
-- Called by: _insert_execution, _advance_many (TestSQLShape: no other file
-- draws from the sequence).
-- It has no `set search_path`, so that the planner can inline it: every name
-- is qualified.
create or replace function geneva._execution_id(p_workflow_id bigint)
returns bigint
language sql
volatile
as $$
  select pg_catalog.nextval('geneva.step_executions_id_seq')
$$;
