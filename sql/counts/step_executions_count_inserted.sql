-- geneva._trg_step_executions_count_inserted: counts an execution inserted
-- already ended (history imported by hand; the engine inserts only
-- scheduled and running ones) in geneva.ended_execution_deltas, as
-- geneva._end_executions counts the executions it ends: a row of its
-- minute (UTC), type, step and outcome, with the buckets of its queue lag
-- and run time (geneva._duration_bucket).
--
-- A row trigger whose WHEN clause picks the rows: the engine's inserts cost
-- an expression, not a call. Executions that ended before
-- geneva._ended_counts_from() are not counted: no view reads that far back.
-- Fired by: the trigger step_executions_count_inserted, after insert
-- on geneva.step_executions, for each row inserted ended since
-- geneva._ended_counts_from().
create or replace function geneva._trg_step_executions_count_inserted()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_lag double precision := geneva._duration_bucket(new.started_at - new.scheduled_for);
  v_run_time double precision := geneva._duration_bucket(new.finished_at - new.started_at);
begin
  insert into geneva.ended_execution_deltas (
    minute, workflow_type, step_name, outcome, executions, runs, queue_lag, run_time
  )
  select date_trunc('minute', new.finished_at, 'UTC'), w.workflow_type, new.step_name, new.outcome,
    1, case when v_lag is null then 0 else 1 end,
    case when v_lag is null then '{}' else array[v_lag] end,
    case when v_run_time is null then '{}' else array[v_run_time] end
  from geneva.workflows w
  where w.id = new.workflow_id;
  return null;
end;
$$;

create or replace trigger step_executions_count_inserted
after insert on geneva.step_executions
for each row
when (
  -- ended (step_executions_state_valid ties finished_at to an outcome);
  -- the test for null first, so that an active row calls no function
  new.finished_at is not null
  and new.finished_at >= geneva._ended_counts_from()
)
execute function geneva._trg_step_executions_count_inserted();
