-- geneva.workflow_counts: the cells' geneva.workflow_counts, added up, on
-- the router (docs/cells.md).
--
-- The columns of the cells' view, so that `geneva ls`, goclient and the
-- dashboard read the router unchanged; each cell's rows
-- (geneva.cells_workflow_counts, RUN ON ALL) summed by type and state.
create or replace view geneva.workflow_counts as
select c.workflow_type, c.state, sum(c.workflows)::bigint as workflows
from geneva.cells_workflow_counts() c
group by c.workflow_type, c.state;

comment on view geneva.workflow_counts is 'Workflows per type and state, of every cell.';
