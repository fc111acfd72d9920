-- geneva.runaway_workflows: the ongoing workflows housekeeping flagged as
-- runaway chains (geneva._flag_runaways, each round): more executions than
-- the setting runaway_executions (1000 unless an operator set another), or
-- one step executed more than runaway_repeats times in a row (100). Such a
-- workflow is not stopped: the list is for operators to look at (the
-- manual: a workflow should end; one that polls or retries for months is
-- better a schedule creating fresh workflows).
--
-- Per workflow: its type, hero and state; executions, all it has now;
-- step_name and repeats, the step executed most times in a row (its
-- highest attempt; the latest when two tie); when it was flagged. A flagged
-- workflow is listed while it is ongoing and still past a threshold (raised
-- thresholds hide it at once).
--
-- For dashboards (the Stuck page), `geneva stuck` and the metric
-- runaway_workflows (geneva.engine_metrics). Reads the flags only, then
-- each flagged workflow's executions (step_executions_workflow_id): its
-- cost follows the flagged workflows, not all of them.
create or replace view geneva.runaway_workflows as
select
  r.workflow_id,
  w.workflow_type,
  w.hero_type,
  w.hero_id,
  w.state,
  c.executions,
  m.step_name,
  m.repeats,
  r.flagged_at
from geneva.runaways r
join geneva.workflows w on w.id = r.workflow_id
cross join lateral (
  select count(*) as executions from geneva.step_executions e where e.workflow_id = r.workflow_id
) c
cross join lateral (
  select e.step_name, e.attempt as repeats
  from geneva.step_executions e
  where e.workflow_id = r.workflow_id
  order by e.attempt desc, e.id desc
  limit 1
) m
cross join lateral (
  select s.runaway_executions, s.runaway_repeats from geneva.housekeeping_settings s where s.singleton
) s
where w.finished_at is null and w.canceled_at is null
  and (c.executions > s.runaway_executions or m.repeats > s.runaway_repeats);

comment on view geneva.runaway_workflows is
'Ongoing workflows housekeeping flagged as runaway chains: more executions than the setting runaway_executions, or one step more than runaway_repeats times in a row. Flagged, never stopped.';
