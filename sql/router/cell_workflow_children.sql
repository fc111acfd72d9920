-- geneva.cell_workflow_children: one parent's children (a child lives in its parent's cell), from the one cell
-- its id routes to, with a cell column, on the router (docs/cells.md).
--
-- RUN ON p_parent_id (a cell's ids carry their partition): the cell's
-- geneva.workflow_children where parent_id = p_parent_id, and its database's name as
-- cell. The router's view geneva.workflow_children reads every cell's whole view
-- and filters on the router; a read of one workflow calls this instead and
-- reads one cell, filtered there. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: goclient's ChildCounts and the dashboard's workflow page through the router.
-- Raises: what reading the cell's view raises.
create or replace function geneva.cell_workflow_children(p_parent_id bigint)
returns table (
  cell text,
  {{ index .view_columns "workflow_children" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_parent_id;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.workflow_children v
  where v.parent_id = p_parent_id;
$$;

comment on function geneva.cell_workflow_children(bigint) is
'The cell''s geneva.workflow_children where parent_id = p_parent_id, run in the cell the id routes to, with the cell''s database name.';
