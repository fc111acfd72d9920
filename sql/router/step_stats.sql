-- geneva.step_stats: the cells' geneva.step_stats, on the router (docs/cells.md):
-- each cell's step statistics (percentiles do not add up across cells), their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_step_stats, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.step_stats as
select {{ index .view_names "step_stats" }}, c.cell
from geneva.cells_step_stats() c;

comment on view geneva.step_stats is 'The cells'' geneva.step_stats, with the cell of each row.';
