-- geneva.workflow_blockers: the cells' geneva.workflow_blockers, on the router (docs/cells.md):
-- what holds each cell's workflows, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_workflow_blockers, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.workflow_blockers as
select {{ index .view_names "workflow_blockers" }}, c.cell
from geneva.cells_workflow_blockers() c;

comment on view geneva.workflow_blockers is 'The cells'' geneva.workflow_blockers, with the cell of each row.';
