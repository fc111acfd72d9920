-- geneva.step_errors: the cells' geneva.step_errors, on the router (docs/cells.md):
-- each cell's executions that ended in an error, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_step_errors, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.step_errors as
select {{ index .view_names "step_errors" }}, c.cell
from geneva.cells_step_errors() c;

comment on view geneva.step_errors is 'The cells'' geneva.step_errors, with the cell of each row.';
