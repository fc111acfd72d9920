-- geneva.queue_lag: the cells' geneva.queue_lag, on the router (docs/cells.md):
-- each cell's queues (a River a cell), their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_queue_lag, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.queue_lag as
select {{ index .view_names "queue_lag" }}, c.cell
from geneva.cells_queue_lag() c;

comment on view geneva.queue_lag is 'The cells'' geneva.queue_lag, with the cell of each row.';
