-- geneva.cell_workflow_list: the workflows that retry one workflow (a retry is its hero's, so its cell's), from the one cell
-- its id routes to, with a cell column, on the router (docs/cells.md).
--
-- RUN ON p_retried_from (a cell's ids carry their partition): the cell's
-- geneva.workflow_list where retried_from = p_retried_from, and its database's name as
-- cell. The router's view geneva.workflow_list reads every cell's whole view
-- and filters on the router; a read of one workflow calls this instead and
-- reads one cell, filtered there. The columns are the first cell's
-- (MigrateRouter reads them: view_columns).
--
-- Called by: goclient's Retries and the dashboard's workflow page through the router.
-- Raises: what reading the cell's view raises.
create or replace function geneva.cell_workflow_list(p_retried_from bigint)
returns table (
  cell text,
  {{ index .view_columns "workflow_list" }}
)
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_retried_from;
  select pg_catalog.current_database()::text as cell, v.*
  from geneva.workflow_list v
  where v.retried_from = p_retried_from;
$$;

comment on function geneva.cell_workflow_list(bigint) is
'The cell''s geneva.workflow_list where retried_from = p_retried_from, run in the cell the id routes to, with the cell''s database name.';
