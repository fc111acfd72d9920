-- geneva.definition_steps: the steps of each registered workflow type, in
-- run order, with the wait before each, its queue (the type's, or an HTTP
-- step's own), an HTTP step's endpoint and the definition's version.
--
-- For the dashboard's step list of a workflow (filter by workflow_type).
-- Reads workflow_definitions by its primary key.
create or replace view geneva.definition_steps as
select
  d.workflow_type,
  s.position::integer as position,
  s.step_name,
  d.step_waits[s.position] as wait,
  d.step_queues[s.position] as queue,
  d.updated_at as defined_at,
  d.definition -> 'steps' -> (s.position::integer - 1) -> 'http' ->> 'url' as http_url,
  d.version
from geneva.workflow_definitions d
cross join lateral unnest(d.step_names) with ordinality as s(step_name, position);

comment on view geneva.definition_steps is
'The steps of each workflow type in run order, with their waits, queues, HTTP endpoints and the definition''s version.';
