-- geneva.workflow_children: the cells' geneva.workflow_children, on the router (docs/cells.md):
-- each cell's children (a child lives in its parent's cell), their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_workflow_children, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.workflow_children as
select {{ index .view_names "workflow_children" }}, c.cell
from geneva.cells_workflow_children() c;

comment on view geneva.workflow_children is 'The cells'' geneva.workflow_children, with the cell of each row.';
