-- geneva.step_stats: per workflow type and step, over the executions that
-- ended in the last 24 hours: how many, how they ended (outcome -> count), and
-- the queue lag (started - scheduled) and run time (ended - started) at the
-- median and the 95th percentile, in seconds.
--
-- For dashboards. Reads step_executions_finished_at for the window. One pass
-- over the window, grouped by type and step: both percentiles of a measure
-- come from one sort (percentile_cont over an array of fractions), and the
-- outcomes are counted from the group's own list, so that a day of a busy
-- database (a hundred thousand executions) reads in a fraction of a second.
create or replace view geneva.step_stats as
select
  g.workflow_type,
  g.step_name,
  g.executions,
  g.runs,
  (
    select jsonb_object_agg(o.outcome, o.executions)
    from (
      select u.outcome, count(*) as executions
      from unnest(g.outcome_list) as u(outcome)
      group by u.outcome
    ) o
  ) as outcomes,
  g.queue_lag[1] as queue_lag_p50_seconds,
  g.queue_lag[2] as queue_lag_p95_seconds,
  g.run_time[1] as run_time_p50_seconds,
  g.run_time[2] as run_time_p95_seconds
from (
  select
    w.workflow_type,
    e.step_name,
    count(*) as executions,
    count(e.started_at) as runs,
    array_agg(e.outcome) as outcome_list,
    percentile_cont(array[0.5, 0.95]) within group (
      order by extract(epoch from e.started_at - e.scheduled_for)
    ) as queue_lag,
    percentile_cont(array[0.5, 0.95]) within group (
      order by extract(epoch from e.finished_at - e.started_at)
    ) as run_time
  from geneva.step_executions e
  join geneva.workflows w on w.id = e.workflow_id
  where e.finished_at >= geneva.now() - interval '24 hours'
  group by w.workflow_type, e.step_name
) g;

comment on view geneva.step_stats is
'Per type and step, over the last 24 hours: executions, outcomes, queue lag and run time percentiles.';
