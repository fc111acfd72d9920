-- geneva._trg_step_executions_count_ended: counts the executions an update ends
-- in geneva.ended_execution_deltas, for geneva.step_stats,
-- geneva.step_throughput and geneva.engine_metrics: one row per minute they
-- ended in (UTC), type, step and outcome, with how many ended, how many of them
-- ran, and the bucket of each one's queue lag (started - scheduled) and run
-- time (ended - started) (geneva._duration_bucket). Appends only: concurrent
-- transactions never wait on one another's counts.
--
-- A statement trigger over the rows an update left (the transition table
-- "changed"): a batch that ends many executions (geneva.complete_steps)
-- appends their counts in one insert, and an update that ends none (a
-- start, a heartbeat) appends nothing. It fires only for updates made while
-- geneva.ending is 'on', as every update that ends an execution is
-- (geneva._end_execution, geneva._end_running: step_executions_guard_state
-- refuses the others), so that a claim's, a heartbeat's or a checkpoint's
-- update does not call it (40-100 µs a statement). Inserts of ended executions are
-- counted by step_executions_count_inserted, a row trigger whose WHEN clause
-- spares the engine's inserts (scheduled and running executions) any call.
-- An ended execution never changes (step_executions_guard_columns), so every
-- ended row an update leaves is one it ended.
--
-- One pass, one grouping, and each workflow's type looked up by its key: the
-- plan is cached for the session, whatever the size of the statement it was
-- made for, and a join planned for one row must not meet an import of a
-- million.
-- Fired by: the trigger step_executions_count_ended, after update on
-- geneva.step_executions, for each statement.
create or replace function geneva._trg_step_executions_count_ended()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  insert into geneva.ended_execution_deltas (
    minute, workflow_type, step_name, outcome, executions, runs, queue_lag, run_time
  )
  select e.minute, e.workflow_type, e.step_name, e.outcome, count(*), count(e.lag),
    coalesce(array_agg(e.lag order by e.lag) filter (where e.lag is not null), '{}'),
    coalesce(array_agg(e.run_time order by e.run_time) filter (where e.run_time is not null), '{}')
  from (
    select
      date_trunc('minute', c.finished_at, 'UTC') as minute,
      (select w.workflow_type from geneva.workflows w where w.id = c.workflow_id) as workflow_type,
      c.step_name,
      c.outcome,
      geneva._duration_bucket(c.started_at - c.scheduled_for) as lag,
      geneva._duration_bucket(c.finished_at - c.started_at) as run_time
    from changed c
    where c.state not in ('scheduled', 'in_progress')
  ) e
  group by 1, 2, 3, 4;
  return null;
end;
$$;

create or replace trigger step_executions_count_ended
after update on geneva.step_executions
referencing new table as changed
for each statement
when (pg_catalog.current_setting('geneva.ending', true) = 'on')
execute function geneva._trg_step_executions_count_ended();
