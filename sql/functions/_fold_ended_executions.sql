-- geneva._fold_ended_executions: folds the counts of ended executions that
-- the count triggers appended (geneva.ended_execution_deltas, migration 007)
-- into geneva.ended_executions_by_minute (counts) and
-- geneva.ended_executions_by_hour (counts and histograms), so that the views
-- over them sum a few rows per step; and drops what no view reads any more:
-- minutes older than two hours (geneva.step_throughput shows the last hour,
-- geneva.engine_metrics five minutes) and hours older than 26
-- (geneva.step_stats shows 24 to 25). Deltas of transactions not yet
-- committed are left for the next fold.
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
  v_hours_from timestamptz := date_trunc('hour', geneva.now() - interval '26 hours', 'UTC');
  v_folded integer;
begin
  -- the only writer of the counts (sql/triggers/count*_guard.sql)
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
    on conflict (minute, workflow_type, step_name, outcome)
    do update set executions = c.executions + excluded.executions
  ),
  hourly as (
    select date_trunc('hour', m.minute, 'UTC') as hour, m.*
    from moved m
    where m.minute >= v_hours_from
  ),
  lags as (
    select l.hour, l.workflow_type, l.step_name, l.outcome, jsonb_object_agg(l.bucket, l.executions) as histogram
    from (
      select h.hour, h.workflow_type, h.step_name, h.outcome, b.key as bucket, sum(b.value::bigint) as executions
      from hourly h, jsonb_each_text(h.queue_lag) b
      group by 1, 2, 3, 4, 5
    ) l
    group by 1, 2, 3, 4
  ),
  run_times as (
    select r.hour, r.workflow_type, r.step_name, r.outcome, jsonb_object_agg(r.bucket, r.executions) as histogram
    from (
      select h.hour, h.workflow_type, h.step_name, h.outcome, b.key as bucket, sum(b.value::bigint) as executions
      from hourly h, jsonb_each_text(h.run_time) b
      group by 1, 2, 3, 4, 5
    ) r
    group by 1, 2, 3, 4
  ),
  hours as (
    insert into geneva.ended_executions_by_hour as c (
      hour, workflow_type, step_name, outcome, executions, runs, queue_lag, run_time
    )
    select s.hour, s.workflow_type, s.step_name, s.outcome, s.executions, s.runs,
      coalesce(l.histogram, '{}'), coalesce(r.histogram, '{}')
    from (
      select h.hour, h.workflow_type, h.step_name, h.outcome, sum(h.executions) as executions, sum(h.runs) as runs
      from hourly h
      group by 1, 2, 3, 4
    ) s
    left join lags l using (hour, workflow_type, step_name, outcome)
    left join run_times r using (hour, workflow_type, step_name, outcome)
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
