-- geneva._cells_count_workflows: every cell's geneva.count_workflows, on
-- the router (docs/cells.md).
--
-- RUN ON ALL: a row a cell; the router's geneva.count_workflows adds them up.
--
-- Called by: the router's count_workflows.
-- Raises: what the cells' geneva.count_workflows raises.
create or replace function geneva._cells_count_workflows(p_filter jsonb)
returns table (
  workflows bigint,
  newest_id bigint
)
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  target geneva.count_workflows;
$$;
