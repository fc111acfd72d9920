-- Geneva 007: the ended executions of the last day, kept rolled up as they
-- end, so that geneva.step_stats, geneva.step_throughput and
-- geneva.engine_metrics read a few rows per step instead of every execution
-- in their window (at thousands of steps a second a day holds hundreds of
-- millions; they were the views whose cost grew with the load).
--
-- Statement triggers on geneva.step_executions append, for every statement
-- that ends executions (or inserts them already ended), one row per minute,
-- type, step and outcome to ended_execution_deltas
-- (sql/triggers/step_executions_count_ended.sql): inserts only, so concurrent
-- transactions never wait on a counter row. Housekeeping folds the deltas
-- into ended_executions_by_minute (counts, kept two hours) and
-- ended_executions_by_hour (counts and the queue lag and run time
-- histograms, kept 26 hours), one writer (geneva._fold_ended_executions).
-- The views read the folded rows in their window plus the deltas.
--
-- A histogram is a jsonb object from bucket to count, each bucket named by
-- the seconds it stands for (geneva._duration_bucket: 0 for a microsecond or
-- less, else buckets 2% wide, each within 1% of its middle). Executions that ended
-- before this migration are not counted: the windows are a day at most.

create table geneva.ended_execution_deltas (
  minute timestamptz not null,
  workflow_type text not null,
  step_name text not null,
  outcome text not null,
  executions integer not null,
  runs integer not null,
  queue_lag jsonb not null,
  run_time jsonb not null
);

create table geneva.ended_executions_by_minute (
  minute timestamptz not null,
  workflow_type text not null,
  step_name text not null,
  outcome text not null,
  executions bigint not null,
  primary key (minute, workflow_type, step_name, outcome)
);

create table geneva.ended_executions_by_hour (
  hour timestamptz not null,
  workflow_type text not null,
  step_name text not null,
  outcome text not null,
  executions bigint not null,
  runs bigint not null,
  queue_lag jsonb not null,
  run_time jsonb not null,
  primary key (hour, workflow_type, step_name, outcome)
);
