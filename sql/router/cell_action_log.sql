-- geneva.cell_action_log: the operator actions on one workflow, from the one cell
-- its id routes to, with a cell column, on the router (docs/cells.md).
--
-- RUN ON p_workflow_id (a cell's ids carry their partition): the cell's
-- geneva.action_log where workflow_id = p_workflow_id, and its database's name as
-- cell. The router's view geneva.action_log reads every cell's whole view
-- and filters on the router; a read of one workflow calls this instead and
-- reads one cell, filtered there. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: goclient's ActionLog with a WorkflowID and the dashboard's workflow page through the router.
-- Raises: what reading the cell's view raises.
create or replace function geneva.cell_action_log(p_workflow_id bigint)
returns table (
  cell text,
  {{ index .view_columns "action_log" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_workflow_id;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.action_log v
  where v.workflow_id = p_workflow_id;
$$;

comment on function geneva.cell_action_log(bigint) is
'The cell''s geneva.action_log where workflow_id = p_workflow_id, run in the cell the id routes to, with the cell''s database name.';
