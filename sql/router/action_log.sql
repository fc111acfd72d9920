-- geneva.action_log: the cells' geneva.action_log, on the router (docs/cells.md):
-- the operator actions each cell logged, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_action_log, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.action_log as
select {{ index .view_names "action_log" }}, c.cell
from geneva.cells_action_log() c;

comment on view geneva.action_log is 'The cells'' geneva.action_log, with the cell of each row.';
