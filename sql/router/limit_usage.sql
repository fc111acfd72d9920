-- geneva.limit_usage: the cells' geneva.limit_usage, on the router (docs/cells.md):
-- each cell's limit usage (each cell counts its own), their rows one after the other, each with the
-- cell it comes from (its database's name) in a last column, cell.
--
-- The cells' columns first, so that goclient, the dashboard and monitoring
-- read the router unchanged (geneva.cells_limit_usage, RUN ON ALL). Every
-- cell's whole view is read at each query: a filter applies on the router.
create or replace view geneva.limit_usage as
select {{ index .view_names "limit_usage" }}, c.cell
from geneva.cells_limit_usage() c;

comment on view geneva.limit_usage is 'The cells'' geneva.limit_usage, with the cell of each row.';
