-- Geneva 007: the ended executions of the last day, kept rolled up as they
-- end, so that geneva.step_stats, geneva.step_throughput and
-- geneva.engine_metrics read a few rows per step instead of every execution
-- in their window (at thousands of steps a second a day holds hundreds of
-- millions; they were the views whose cost grew with the load).
--
-- A statement trigger on geneva.step_executions appends, for every update
-- that ends executions, one row per minute, type, step and outcome to
-- ended_execution_deltas (sql/triggers/step_executions_count_ended.sql; a row
-- trigger counts executions inserted already ended): inserts only, so concurrent
-- transactions never wait on a counter row. Housekeeping folds the deltas
-- into ended_executions_by_minute (counts, kept two hours) and
-- ended_executions_by_hour (counts and the queue lag and run time
-- histograms, kept 26 hours), one writer (geneva._fold_ended_executions).
-- The views read the folded rows in their window plus the deltas.
--
-- Durations go in buckets 2% wide, each named by the seconds it stands for
-- (geneva._duration_bucket: 0 for a microsecond or less, else within 1% of
-- every duration in it). A delta lists the bucket of each execution it
-- counts (written in one pass over a statement's rows); an hour keeps a
-- histogram: its buckets in order, with how many executions each holds.
-- Arrays, not jsonb objects: PostgreSQL expects ten elements of an array
-- where it expects a hundred keys of an object, and the views' plans stay
-- cheap enough not to be compiled (JIT) at every query. Executions that ended
-- before this migration are not counted: the windows are a day at most.

create type geneva.duration_bucket as (
  seconds double precision,
  executions bigint
);

create table geneva.ended_execution_deltas (
  minute timestamptz not null,
  workflow_type text not null,
  step_name text not null,
  outcome text not null,
  executions integer not null,
  runs integer not null,
  queue_lag double precision[] not null,
  run_time double precision[] not null
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
  queue_lag geneva.duration_bucket[] not null,
  run_time geneva.duration_bucket[] not null,
  primary key (hour, workflow_type, step_name, outcome)
);

-- The delta tables are queues: every fold deletes all they hold. Autovacuum
-- takes them after a thousand dead or inserted rows whatever their size (by
-- default it waits for a fifth of the table), so that they stay a few pages
-- and the planner's estimate of them stays what they hold: an estimate built
-- on a minute's dead rows made geneva.step_stats' plan costly enough to be
-- compiled (JIT) at every read, ten times its cost.
alter table geneva.ended_execution_deltas set (
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_insert_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0,
  autovacuum_analyze_threshold = 1000,
  autovacuum_analyze_scale_factor = 0
);
alter table geneva.ended_workflow_count_deltas set (
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_insert_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0,
  autovacuum_analyze_threshold = 1000,
  autovacuum_analyze_scale_factor = 0
);

-- No view reads the executions by when they ended any more (the index served
-- geneva.step_stats' window, then engine_metrics' and step_throughput's):
-- every end wrote a B-tree entry for nothing.
drop index geneva.step_executions_finished_at;
