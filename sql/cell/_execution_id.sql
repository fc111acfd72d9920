-- geneva._execution_id: a new step execution's id, in a cell (docs/cells.md).
--
-- Replaces engine/_execution_id.sql in a database installed by `geneva
-- migrate --cell --partitions P` (CellPartitions is P, CellMask P - 1): the
-- id is the sequence's next value times P plus its workflow's partition
-- (workflow_id & (P - 1), see cell/_workflow_id.sql), so a call by execution
-- id routes to the same cell as its workflow.
--
-- Called by: _insert_execution, _advance_many.
-- It has no `set search_path`, so that the planner can inline it: every name
-- is qualified.
create or replace function geneva._execution_id(p_workflow_id bigint)
returns bigint
language sql
volatile
as $$
  select pg_catalog.nextval('geneva.step_executions_id_seq') operator(pg_catalog.*) {{ .CellPartitions }}
    operator(pg_catalog.+) (p_workflow_id operator(pg_catalog.&) {{ .CellMask }})
$$;
