-- geneva.schedule_firing_list: the cells' geneva.schedule_firing_list, on the router (docs/cells.md):
-- each cell's schedule firings, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_schedule_firing_list, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.schedule_firing_list as
select {{ index .view_names "schedule_firing_list" }}, c.cell
from geneva.cells_schedule_firing_list() c;

comment on view geneva.schedule_firing_list is 'The cells'' geneva.schedule_firing_list, with the cell of each row.';
