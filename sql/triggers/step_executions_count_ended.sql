-- geneva._trg_step_executions_count_ended: counts the executions a statement
-- ends, or inserts already ended (history imported by hand: the engine
-- inserts only scheduled and running ones), in geneva.ended_execution_deltas
-- (migration 007), for geneva.step_stats, geneva.step_throughput and
-- geneva.engine_metrics: one row per minute they ended in (UTC), type, step
-- and outcome, with how many ended, how many of them ran, and their queue lag
-- (started - scheduled) and run time (ended - started) as histograms (the
-- seconds a bucket stands for -> count, see geneva._duration_bucket).
-- Appends only: concurrent transactions never wait on one another's counts.
--
-- Statement triggers, one for updates and one for inserts, over the rows the
-- statement left (the transition table "changed"): a batch that ends many
-- executions (geneva.complete_steps) appends their counts in one insert, and
-- a statement that ends none (a start, a heartbeat, a new execution) appends
-- nothing. An ended execution never changes (step_executions_guard_columns),
-- so every ended row an update leaves is one it ended.
create or replace function geneva._trg_step_executions_count_ended()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  with ended as (
    select
      date_trunc('minute', e.finished_at, 'UTC') as minute,
      w.workflow_type,
      e.step_name,
      e.outcome,
      e.started_at is not null as ran,
      geneva._duration_bucket(e.started_at - e.scheduled_for) as lag_bucket,
      geneva._duration_bucket(e.finished_at - e.started_at) as run_bucket
    from changed e
    join geneva.workflows w on w.id = e.workflow_id
    where e.state not in ('scheduled', 'in_progress')
  ),
  lags as (
    select l.minute, l.workflow_type, l.step_name, l.outcome, jsonb_object_agg(l.lag_bucket, l.executions) as histogram
    from (
      select x.minute, x.workflow_type, x.step_name, x.outcome, x.lag_bucket, count(*) as executions
      from ended x
      where x.lag_bucket is not null
      group by 1, 2, 3, 4, 5
    ) l
    group by 1, 2, 3, 4
  ),
  run_times as (
    select r.minute, r.workflow_type, r.step_name, r.outcome, jsonb_object_agg(r.run_bucket, r.executions) as histogram
    from (
      select x.minute, x.workflow_type, x.step_name, x.outcome, x.run_bucket, count(*) as executions
      from ended x
      where x.run_bucket is not null
      group by 1, 2, 3, 4, 5
    ) r
    group by 1, 2, 3, 4
  )
  insert into geneva.ended_execution_deltas (
    minute, workflow_type, step_name, outcome, executions, runs, queue_lag, run_time
  )
  select c.minute, c.workflow_type, c.step_name, c.outcome, c.executions, c.runs,
    coalesce(l.histogram, '{}'), coalesce(r.histogram, '{}')
  from (
    select x.minute, x.workflow_type, x.step_name, x.outcome, count(*) as executions, count(*) filter (where x.ran) as runs
    from ended x
    group by 1, 2, 3, 4
  ) c
  left join lags l using (minute, workflow_type, step_name, outcome)
  left join run_times r using (minute, workflow_type, step_name, outcome);
  return null;
end;
$$;

create or replace trigger step_executions_count_ended
after update on geneva.step_executions
referencing new table as changed
for each statement
execute function geneva._trg_step_executions_count_ended();

create or replace trigger step_executions_count_ended_on_insert
after insert on geneva.step_executions
referencing new table as changed
for each statement
execute function geneva._trg_step_executions_count_ended();
