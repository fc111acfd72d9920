-- geneva.paused_workflows: the cells' geneva.paused_workflows, on the router (docs/cells.md):
-- each cell's paused workflows, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_paused_workflows, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.paused_workflows as
select {{ index .view_names "paused_workflows" }}, c.cell
from geneva.cells_paused_workflows() c;

comment on view geneva.paused_workflows is 'The cells'' geneva.paused_workflows, with the cell of each row.';
