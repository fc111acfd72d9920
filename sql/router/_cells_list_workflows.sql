-- geneva._cells_list_workflows: every cell's geneva.list_workflows, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell once (partitions of one cell share its connection),
-- in parallel; the router's geneva.list_workflows merges the pages.
--
-- Called by: the router's list_workflows.
-- Raises: what the cells' geneva.list_workflows raises.
create or replace function geneva._cells_list_workflows(
  p_filter jsonb,
  p_limit integer
)
returns table (
  id bigint,
  workflow_type text,
  hero_type text,
  hero_id text,
  state text,
  current_step_name text,
  next_step_name text,
  allow_multiple boolean,
  requested_action text,
  created_at timestamptz,
  updated_at timestamptz,
  started_at timestamptz,
  transitioned_at timestamptz,
  paused_at timestamptz,
  finished_at timestamptz,
  canceled_at timestamptz,
  group_name text,
  retried_from bigint,
  definition_version integer,
  started_version integer,
  parent_id bigint,
  root_id bigint,
  children integer,
  children_ended integer,
  last_error_class text,
  last_error_message text,
  last_error_step text,
  last_error_at timestamptz
)
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  target geneva.list_workflows;
$$;
