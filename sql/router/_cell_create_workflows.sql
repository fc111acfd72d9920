-- geneva._cell_create_workflows: the cells' geneva.create_workflows, in the
-- cell of one partition, on the router (docs/cells.md).
--
-- Runs geneva.create_workflows in the cell holding p_partition with the
-- other arguments: the share of a list whose heroes (or parent) are that
-- cell's.
--
-- Called by: the router's create_workflows.
-- Raises: what the cell's geneva.create_workflows raises.
create or replace function geneva._cell_create_workflows(
  p_partition integer,
  p_workflow_type text,
  p_hero_type text,
  p_hero_ids text[],
  p_allow_multiple boolean,
  p_trace_context text,
  p_groups text[],
  p_idempotency_keys text[],
  p_parent_id bigint,
  p_skip_ongoing boolean,
  p_child_keys text[]
)
returns bigint[]
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_partition;
  select geneva.create_workflows(
    p_workflow_type, p_hero_type, p_hero_ids, p_allow_multiple, p_trace_context,
    p_groups, p_idempotency_keys, p_parent_id, p_skip_ongoing, p_child_keys
  );
$$;
