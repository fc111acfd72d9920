-- geneva.runaway_workflows: the cells' geneva.runaway_workflows, on the router (docs/cells.md):
-- each cell's runaway workflows, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_runaway_workflows, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.runaway_workflows as
select {{ index .view_names "runaway_workflows" }}, c.cell
from geneva.cells_runaway_workflows() c;

comment on view geneva.runaway_workflows is 'The cells'' geneva.runaway_workflows, with the cell of each row.';
