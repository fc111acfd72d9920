-- geneva.orphan_workflows: the cells' geneva.orphan_workflows, on the router (docs/cells.md):
-- each cell's workflows housekeeping would repair, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_orphan_workflows, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.orphan_workflows as
select {{ index .view_names "orphan_workflows" }}, c.cell
from geneva.cells_orphan_workflows() c;

comment on view geneva.orphan_workflows is 'The cells'' geneva.orphan_workflows, with the cell of each row.';
