-- geneva.definition_steps: the cells' geneva.definition_steps, merged, on the router
-- (docs/cells.md): one row a type, version and step position: the first cell's (by name).
--
-- The cells' columns, so that goclient, the dashboard and monitoring read
-- the router unchanged (each cell's steps of its current definitions: geneva.cells_definition_steps, RUN ON ALL).
create or replace view geneva.definition_steps as
select distinct on (c.workflow_type, c.version, c.position) {{ index .view_names "definition_steps" }}
from geneva.cells_definition_steps() c
order by c.workflow_type, c.version, c.position, c.cell;

comment on view geneva.definition_steps is 'The cells'' geneva.definition_steps, merged.';
