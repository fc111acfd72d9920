-- geneva._workflow_id: a new workflow's id, in a cell (docs/cells.md).
--
-- Replaces engine/_workflow_id.sql in a database installed by `geneva
-- migrate --cell --partitions P` (CellPartitions is P, CellMask P - 1): the
-- id is the sequence's next value times P plus the workflow's partition, so
-- id & (P - 1) is the partition, and the router sends a call by id to the
-- cell holding it. A workflow's partition is its hero's,
-- hashtext(hero_type || ':' || hero_id) & (P - 1), the router's rule for
-- creating it; a child's is its parent's (it is created in its parent's
-- cell). Ids stay unique: each sequence value makes one id a partition.
--
-- Called by: create_workflows, _retry_workflow.
-- It has no `set search_path`, so that the planner can inline it: every name
-- is qualified.
create or replace function geneva._workflow_id(p_hero_type text, p_hero_id text, p_parent_id bigint)
returns bigint
language sql
volatile
as $$
  select pg_catalog.nextval('geneva.workflows_id_seq') operator(pg_catalog.*) {{ .CellPartitions }}
    operator(pg_catalog.+) (coalesce(
      p_parent_id,
      pg_catalog.hashtext(p_hero_type operator(pg_catalog.||) ':' operator(pg_catalog.||) p_hero_id)
    ) operator(pg_catalog.&) {{ .CellMask }})
$$;

-- What makes a database a cell, and of how many partitions: Migrate reads it
-- back (CellPartitions), so that a later `geneva migrate` keeps the cell's ids.
comment on function geneva._workflow_id(text, text, bigint) is
'cell of {{ .CellPartitions }} partitions: an id is nextval * {{ .CellPartitions }} + its partition';
