-- geneva.definition_versions: every definition each workflow type has had,
-- newest first: its version, when and by whom (session_user) it was
-- defined, whether it is the current one, its step names and how many are
-- HTTP steps, and the definition itself.
--
-- For operators (what changed, when, by whom) and `geneva define`. Reads
-- workflow_definition_versions by its primary key.
create or replace view geneva.definition_versions as
select
  v.workflow_type,
  v.version,
  v.defined_at,
  v.defined_by,
  v.version = d.version as current,
  array(select s ->> 'name' from jsonb_array_elements(v.definition -> 'steps') s) as step_names,
  (select count(*) from jsonb_array_elements(v.definition -> 'steps') s where s ? 'http')::integer as http_steps,
  v.definition
from geneva.workflow_definition_versions v
left join geneva.workflow_definitions d on d.workflow_type = v.workflow_type;

comment on view geneva.definition_versions is
'Every definition of each workflow type, with its version, author and time; current marks the one workflows follow.';
