-- geneva.step_stats: per workflow type and step, over the executions that
-- ended in the last 24 hours: how many, how they ended (outcome -> count), and
-- the queue lag (started - scheduled) and run time (ended - started) at the
-- median and the 95th percentile, in seconds.
--
-- For dashboards. Reads step_executions_finished_at for the window.
create or replace view geneva.step_stats as
with recent as (
  select
    w.workflow_type,
    e.step_name,
    e.outcome,
    extract(epoch from e.started_at - e.scheduled_for) as queue_lag,
    extract(epoch from e.finished_at - e.started_at) as run_time
  from geneva.step_executions e
  join geneva.workflows w on w.id = e.workflow_id
  where e.finished_at >= geneva.now() - interval '24 hours'
),
outcomes as (
  select o.workflow_type, o.step_name, jsonb_object_agg(o.outcome, o.executions) as outcomes
  from (
    select r.workflow_type, r.step_name, r.outcome, count(*) as executions
    from recent r
    group by r.workflow_type, r.step_name, r.outcome
  ) o
  group by o.workflow_type, o.step_name
)
select
  r.workflow_type,
  r.step_name,
  count(*) as executions,
  count(r.run_time) as runs,
  o.outcomes,
  percentile_cont(0.5) within group (order by r.queue_lag) as queue_lag_p50_seconds,
  percentile_cont(0.95) within group (order by r.queue_lag) as queue_lag_p95_seconds,
  percentile_cont(0.5) within group (order by r.run_time) as run_time_p50_seconds,
  percentile_cont(0.95) within group (order by r.run_time) as run_time_p95_seconds
from recent r
join outcomes o on o.workflow_type = r.workflow_type and o.step_name = r.step_name
group by r.workflow_type, r.step_name, o.outcomes;

comment on view geneva.step_stats is
'Per type and step, over the last 24 hours: executions, outcomes, queue lag and run time percentiles.';
