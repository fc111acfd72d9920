-- geneva.awaiting_events: the cells' geneva.awaiting_events, on the router (docs/cells.md):
-- the workflows awaiting an event in each cell, their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_awaiting_events, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.awaiting_events as
select {{ index .view_names "awaiting_events" }}, c.cell
from geneva.cells_awaiting_events() c;

comment on view geneva.awaiting_events is 'The cells'' geneva.awaiting_events, with the cell of each row.';
