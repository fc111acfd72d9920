-- geneva.definition_versions: the cells' geneva.definition_versions, merged, on the router
-- (docs/cells.md): one row a type and version: the first cell's (by name), its ongoing workflows added up over the cells.
--
-- The cells' columns, so that goclient, the dashboard and monitoring read
-- the router unchanged (each cell's definition versions (the same in every cell when defined through the router or by the same workers): geneva.cells_definition_versions, RUN ON ALL).
create or replace view geneva.definition_versions as
select distinct on (c.workflow_type, c.version)
  c.workflow_type, c.version, c.defined_at, c.defined_by, c.current, c.step_names, c.http_steps, c.definition,
  (sum(c.ongoing) over (partition by c.workflow_type, c.version))::bigint as ongoing
from geneva.cells_definition_versions() c
order by c.workflow_type, c.version, c.cell;

comment on view geneva.definition_versions is 'The cells'' geneva.definition_versions, merged.';
