-- geneva._fold_ended_executions: folds the counts of ended executions that
-- the count triggers appended (geneva.ended_execution_deltas) into
-- geneva.ended_executions_by_minute (counts) and
-- geneva.ended_executions_by_hour (counts and histograms), so that the views
-- over them sum a few rows per step; and drops what no view reads any more:
-- minutes older than two hours (geneva.step_throughput shows the last hour,
-- geneva.engine_metrics five minutes) and hours before
-- geneva._ended_counts_from() (geneva.step_stats shows 24 to 25). Deltas of
-- transactions not yet committed are left for the next fold.
--
-- Called by: geneva.housekeep, every round.
-- Returns the deltas folded.
create or replace function geneva._fold_ended_executions()
returns integer
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_minutes_from timestamptz := date_trunc('minute', geneva.now() - interval '2 hours', 'UTC');
  v_hours_from timestamptz := geneva._ended_counts_from();
  v_folded integer;
begin
  -- the only writer of the counts (sql/guards/counts_guard.sql); rows are
  -- written in key order, so that two folds at once (an operator's beside a
  -- worker's) wait on each other rather than deadlock
  perform pg_catalog.set_config('geneva.folding', 'on', true);
  with moved as (
    delete from geneva.ended_execution_deltas d
    returning d.*
  ),
  minutes as (
    insert into geneva.ended_executions_by_minute as c (minute, workflow_type, step_name, outcome, executions)
    select m.minute, m.workflow_type, m.step_name, m.outcome, sum(m.executions)
    from moved m
    where m.minute >= v_minutes_from
    group by 1, 2, 3, 4
    order by 1, 2, 3, 4
    on conflict (minute, workflow_type, step_name, outcome)
    do update set executions = c.executions + excluded.executions
  ),
  -- per hour: the counts, and each measure's buckets with how many each
  -- holds, in one grouping (no join: the plan is cached for the session)
  buckets as (
    select date_trunc('hour', m.minute, 'UTC') as hour, m.workflow_type, m.step_name, m.outcome,
      'queue_lag' as measure, b.seconds, count(*) as executions
    from moved m, unnest(m.queue_lag) b(seconds)
    where m.minute >= v_hours_from
    group by 1, 2, 3, 4, 5, 6
    union all
    select date_trunc('hour', m.minute, 'UTC'), m.workflow_type, m.step_name, m.outcome,
      'run_time', b.seconds, count(*)
    from moved m, unnest(m.run_time) b(seconds)
    where m.minute >= v_hours_from
    group by 1, 2, 3, 4, 5, 6
  ),
  hours as (
    insert into geneva.ended_executions_by_hour as c (
      hour, workflow_type, step_name, outcome, executions, runs, queue_lag, run_time
    )
    select x.hour, x.workflow_type, x.step_name, x.outcome,
      coalesce(sum(x.executions) filter (where x.measure is null), 0),
      coalesce(sum(x.runs) filter (where x.measure is null), 0),
      coalesce(
        array_agg((x.seconds, x.executions)::geneva.duration_bucket order by x.seconds)
          filter (where x.measure = 'queue_lag'),
        '{}'),
      coalesce(
        array_agg((x.seconds, x.executions)::geneva.duration_bucket order by x.seconds)
          filter (where x.measure = 'run_time'),
        '{}')
    from (
      select date_trunc('hour', m.minute, 'UTC') as hour, m.workflow_type, m.step_name, m.outcome,
        null as measure, null::double precision as seconds, m.executions::bigint as executions, m.runs::bigint as runs
      from moved m
      where m.minute >= v_hours_from
      union all
      select b.hour, b.workflow_type, b.step_name, b.outcome, b.measure, b.seconds, b.executions, null
      from buckets b
    ) x
    group by x.hour, x.workflow_type, x.step_name, x.outcome
    order by x.hour, x.workflow_type, x.step_name, x.outcome
    on conflict (hour, workflow_type, step_name, outcome)
    do update set
      executions = c.executions + excluded.executions,
      runs = c.runs + excluded.runs,
      queue_lag = geneva._histogram_add(c.queue_lag, excluded.queue_lag),
      run_time = geneva._histogram_add(c.run_time, excluded.run_time)
  )
  select count(*) into v_folded from moved;

  delete from geneva.ended_executions_by_minute m where m.minute < v_minutes_from;
  delete from geneva.ended_executions_by_hour h where h.hour < v_hours_from;
  perform pg_catalog.set_config('geneva.folding', '', true);
  return v_folded;
end;
$$;
