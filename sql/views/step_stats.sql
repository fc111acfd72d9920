-- geneva.step_stats: per workflow type and step, over the executions that
-- ended since the start of the hour 24 hours ago (24 to 25 hours, by UTC
-- hours): how many, how many ran, how they ended (outcome -> count), and the
-- queue lag (started - scheduled) and run time (ended - started) at the
-- median and the 95th percentile, in seconds, each within 1% of
-- percentile_cont over the durations themselves (a duration of a microsecond
-- or less, a negative one included, counts as 0).
--
-- For dashboards. Reads the counts kept as executions end: the hours
-- housekeeping has folded (ended_executions_by_hour) and the deltas it has
-- not yet (ended_execution_deltas), with the durations in buckets
-- (geneva._duration_bucket) in place of the durations, so that its cost
-- follows the steps and the spread of their durations, not how many
-- executions ended (a busy day holds hundreds of millions). The counts
-- outlive the executions: retention does not take them back.
--
-- A percentile is percentile_cont's over the buckets: the durations at the
-- ranks either side of fraction * (count - 1), interpolated, each duration
-- read as its bucket's.
create or replace view geneva.step_stats as
with counts as (
  select h.workflow_type, h.step_name, h.outcome, h.executions, h.runs
  from geneva.ended_executions_by_hour h
  where h.hour >= date_trunc('hour', geneva.now() - interval '24 hours', 'UTC')
  union all
  select d.workflow_type, d.step_name, d.outcome, d.executions, d.runs
  from geneva.ended_execution_deltas d
  where d.minute >= date_trunc('hour', geneva.now() - interval '24 hours', 'UTC')
),
outcomes as (
  select o.workflow_type, o.step_name, sum(o.executions)::bigint as executions, sum(o.runs)::bigint as runs,
    jsonb_object_agg(o.outcome, o.executions) as outcomes
  from (
    select c.workflow_type, c.step_name, c.outcome, sum(c.executions)::bigint as executions, sum(c.runs) as runs
    from counts c
    group by 1, 2, 3
  ) o
  group by 1, 2
),
-- the deltas' buckets, one per execution, joined per step and measure before
-- they are unnested: the planner then counts each delta once, where it would
-- count ten buckets for each, and an estimate grown with a busy minute's
-- deltas would carry the plan past the JIT thresholds (compiled and
-- optimized at every read, at ten times the query's cost)
delta_buckets as (
  select d.workflow_type, d.step_name, m.measure, string_agg(array_to_string(m.buckets, ','), ',') as buckets
  from geneva.ended_execution_deltas d
  cross join lateral (values ('queue_lag', d.queue_lag), ('run_time', d.run_time)) m(measure, buckets)
  where d.minute >= date_trunc('hour', geneva.now() - interval '24 hours', 'UTC')
    and cardinality(m.buckets) > 0
  group by 1, 2, 3
),
-- each measure's buckets: an hour's with their counts, a delta's one per
-- execution
durations as (
  select h.workflow_type, h.step_name, m.measure, b.seconds, b.executions
  from geneva.ended_executions_by_hour h
  cross join lateral (values ('queue_lag', h.queue_lag), ('run_time', h.run_time)) m(measure, histogram)
  cross join lateral unnest(m.histogram) b
  where h.hour >= date_trunc('hour', geneva.now() - interval '24 hours', 'UTC')
  union all
  select d.workflow_type, d.step_name, d.measure, b.seconds, 1
  from delta_buckets d
  cross join lateral unnest(string_to_array(d.buckets, ',')::double precision[]) b(seconds)
),
buckets as (
  select b.workflow_type, b.step_name, b.measure, b.seconds,
    sum(b.executions) over (partition by b.workflow_type, b.step_name, b.measure order by b.seconds) as running,
    sum(b.executions) over (partition by b.workflow_type, b.step_name, b.measure) as total
  from (
    select d.workflow_type, d.step_name, d.measure, d.seconds, sum(d.executions) as executions
    from durations d
    group by 1, 2, 3, 4
  ) b
),
percentiles as (
  select p.workflow_type, p.step_name, p.measure, p.fraction,
    p.below + (p.rank - floor(p.rank)) * (p.above - p.below) as seconds
  from (
    select b.workflow_type, b.step_name, b.measure, f.fraction, f.fraction * (b.total - 1) as rank,
      min(b.seconds) filter (where b.running > floor(f.fraction * (b.total - 1))) as below,
      min(b.seconds) filter (where b.running > ceil(f.fraction * (b.total - 1))) as above
    from buckets b
    cross join (values (0.5::double precision), (0.95)) f(fraction)
    group by b.workflow_type, b.step_name, b.measure, f.fraction, b.total
  ) p
)
select
  o.workflow_type,
  o.step_name,
  o.executions,
  o.runs,
  o.outcomes,
  max(p.seconds) filter (where p.measure = 'queue_lag' and p.fraction = 0.5) as queue_lag_p50_seconds,
  max(p.seconds) filter (where p.measure = 'queue_lag' and p.fraction = 0.95) as queue_lag_p95_seconds,
  max(p.seconds) filter (where p.measure = 'run_time' and p.fraction = 0.5) as run_time_p50_seconds,
  max(p.seconds) filter (where p.measure = 'run_time' and p.fraction = 0.95) as run_time_p95_seconds
from outcomes o
left join percentiles p using (workflow_type, step_name)
group by o.workflow_type, o.step_name, o.executions, o.runs, o.outcomes;

comment on view geneva.step_stats is
'Per type and step, over the last 24 to 25 hours: executions, outcomes, queue lag and run time percentiles (within 1%).';
