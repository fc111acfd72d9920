-- geneva.workflow_timeline: the cells' geneva.workflow_timeline, on the router (docs/cells.md):
-- each cell's executions with the events they received, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_workflow_timeline, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.workflow_timeline as
select {{ index .view_names "workflow_timeline" }}, c.cell
from geneva.cells_workflow_timeline() c;

comment on view geneva.workflow_timeline is 'The cells'' geneva.workflow_timeline, with the cell of each row.';
