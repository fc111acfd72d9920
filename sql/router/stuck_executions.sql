-- geneva.stuck_executions: the cells' geneva.stuck_executions, on the router
-- (docs/cells.md): each cell's executions housekeeping would recover as
-- stuck, their rows one after the other, each with the cell it comes from
-- (its database's name) in a last column, cell.
--
-- The thresholds a session sets on the router (geneva.stuck_in_progress_after,
-- geneva.stuck_scheduled_after, as in one database) are passed to every
-- cell (geneva.cells_stuck_executions); unset, each cell's housekeeping
-- settings hold.
create or replace view geneva.stuck_executions as
select {{ index .view_names "stuck_executions" }}, c.cell
from geneva.cells_stuck_executions(
  nullif(pg_catalog.current_setting('geneva.stuck_in_progress_after', true), ''),
  nullif(pg_catalog.current_setting('geneva.stuck_scheduled_after', true), '')
) c;

comment on view geneva.stuck_executions is 'The cells'' geneva.stuck_executions, with the cell of each row.';
