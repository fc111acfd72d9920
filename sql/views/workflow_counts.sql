-- geneva.workflow_counts: how many workflows of each type are in each state.
--
-- For dashboards (Grafana, Metabase) and `geneva ls`. Reads
-- workflows_state_type (state, workflow_type).
create or replace view geneva.workflow_counts as
select w.workflow_type, w.state, count(*) as workflows
from geneva.workflows w
group by w.workflow_type, w.state;

comment on view geneva.workflow_counts is 'Workflows per type and state.';
