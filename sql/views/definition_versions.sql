-- geneva.definition_versions: every definition each workflow type has had,
-- newest first: its version, when and by whom (session_user) it was
-- defined, whether it is the current one, its step names and how many are
-- HTTP steps, the definition itself, and how many workflows started under
-- it are still ongoing (ready, performing or paused), whichever version they
-- follow now: the drain view. A version with none ongoing no longer needs
-- the code that ran it ("may I remove the old worker?"):
--   select workflow_type, version, ongoing from geneva.definition_versions
--   where ongoing > 0;
--
-- For operators (what changed, when, by whom) and `geneva define`. Reads
-- workflow_definition_versions by its primary key, and the ongoing
-- workflows (workflows_ongoing_type) once, grouped by type and version.
create or replace view geneva.definition_versions as
select
  v.workflow_type,
  v.version,
  v.defined_at,
  v.defined_by,
  v.version = d.version as current,
  array(select s ->> 'name' from jsonb_array_elements(v.definition -> 'steps') s) as step_names,
  (select count(*) from jsonb_array_elements(v.definition -> 'steps') s where s ? 'http')::integer as http_steps,
  v.definition,
  coalesce(o.ongoing, 0) as ongoing
from geneva.workflow_definition_versions v
left join geneva.workflow_definitions d on d.workflow_type = v.workflow_type
left join (
  select w.workflow_type, w.started_version, count(*) as ongoing
  from geneva.workflows w
  where w.finished_at is null and w.canceled_at is null
  group by w.workflow_type, w.started_version
) o on o.workflow_type = v.workflow_type and o.started_version = v.version;

comment on view geneva.definition_versions is
'Every definition of each workflow type, with its version, author and time; current marks the one workflows follow; ongoing counts the workflows started under it still ongoing.';
