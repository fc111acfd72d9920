-- geneva.workflow_list: the cells' geneva.workflow_list, on the router (docs/cells.md):
-- each cell's workflows, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_workflow_list, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.workflow_list as
select {{ index .view_names "workflow_list" }}, c.cell
from geneva.cells_workflow_list() c;

comment on view geneva.workflow_list is 'The cells'' geneva.workflow_list, with the cell of each row.';
