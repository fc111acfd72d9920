-- geneva.cells_workflow_counts: every cell's geneva.workflow_counts, with a
-- cell column, on the router (docs/cells.md).
--
-- RUN ON ALL: each cell's rows, and its database's name as cell. The
-- router's geneva.workflow_counts adds them up; a dashboard that shows the
-- cells apart reads this.
--
-- Called by: the router's geneva.workflow_counts view; dashboards through
-- the router.
-- Raises: what reading the cells' view raises.
create or replace function geneva.cells_workflow_counts()
returns table (
  cell text,
  workflow_type text,
  state text,
  workflows bigint
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select pg_catalog.current_database()::text as cell, c.workflow_type, c.state, c.workflows
  from geneva.workflow_counts c;
$$;

comment on function geneva.cells_workflow_counts() is
'Every cell''s geneva.workflow_counts, with the cell''s database name.';
