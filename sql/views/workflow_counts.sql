-- geneva.workflow_counts: how many workflows of each type are in each state.
--
-- For dashboards (Grafana, Metabase) and `geneva ls`. Ongoing workflows are
-- counted from workflows_ongoing_type; ended ones are
-- kept counted as they end (ended_workflow_counts, a row per type and
-- state, plus the deltas housekeeping has not folded yet,
-- ended_workflow_count_deltas), so that the view's cost does not grow with
-- the history.
create or replace view geneva.workflow_counts as
select w.workflow_type, w.state, count(*) as workflows
from geneva.workflows w
where w.finished_at is null and w.canceled_at is null
group by w.workflow_type, w.state
union all
select c.workflow_type, c.state, sum(c.workflows)::bigint
from (
  select e.workflow_type, e.state, e.workflows from geneva.ended_workflow_counts e
  union all
  select d.workflow_type, d.state, d.delta from geneva.ended_workflow_count_deltas d
) c
group by c.workflow_type, c.state
having sum(c.workflows) > 0;

comment on view geneva.workflow_counts is 'Workflows per type and state.';
