-- geneva._workflow_id: a new workflow's id (hero_type, hero_id, parent_id).
--
-- The next value of geneva.workflows_id_seq. The arguments are for a cell
-- (docs/cells.md): there sql/cell/_workflow_id.sql replaces this function
-- with one whose ids carry the partition of the workflow (its hero's, or
-- its parent's for a child), so a call by id routes itself. In a single
-- database the arguments are unused and ids are the sequence's, as before.
--
-- Called by: create_workflows, _retry_workflow (TestSQLShape: no other file
-- draws from the sequence).
-- It has no `set search_path`, so that the planner can inline it: every name
-- is qualified.
create or replace function geneva._workflow_id(p_hero_type text, p_hero_id text, p_parent_id bigint)
returns bigint
language sql
volatile
as $$
  select pg_catalog.nextval('geneva.workflows_id_seq')
$$;
