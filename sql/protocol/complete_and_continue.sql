-- geneva.complete_and_continue: geneva.complete_step for a worker that offers
-- to run the next step in the same job.
--
-- Called by: the Go worker (Config.InlineSteps). It records the step's end as
-- complete_step does; then, when what comes next is due now and has no
-- condition of the worker's to evaluate first (the definition has no
-- cancel_if, the step no skip_if), it starts it here, in this transaction,
-- without a River job, and returns it: the worker runs it at once and reports
-- it like any other. Otherwise the next execution is scheduled with its job as
-- usual. A worker that dies while running it leaves an in_progress execution,
-- as any crash does, for housekeeping to recover.
--
-- Locks: the workflow row, then the execution row, then the next execution's.
-- Returns what complete_step returns, then the started next execution: its
-- id, step name, attempt, start, the cursor and execution it continues
-- from (a resumable step's hand-over) and the event it carries (the same
-- step again after one that consumed an event; a step that awaits one is
-- never started here) and its "http" (geneva._step_http: NULL for a Go
-- step; a step is started here only in the queue of the one that ended, so
-- an HTTP step only after an HTTP step); NULLs when none was started.
-- Raises: as complete_step.
create or replace function geneva.complete_and_continue(
  p_execution_id bigint,
  p_signal text default 'success',
  p_wait interval default null,
  p_job_id bigint default null
)
returns table (
  outcome text,
  workflow_state text,
  next_execution_id bigint,
  next_step_name text,
  next_attempt integer,
  next_started_at timestamptz,
  next_cursor jsonb,
  next_continues_from_id bigint,
  next_event_id bigint,
  next_event_name text,
  next_event_payload jsonb,
  next_event_sent_at timestamptz,
  next_http jsonb,
  next_event_sent_by text
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return query
  select c.outcome, c.workflow_state, c.next_execution_id, c.next_step_name, c.next_attempt, c.next_started_at,
    c.next_cursor, c.next_continues_from_id, c.next_event_id, c.next_event_name, c.next_event_payload,
    c.next_event_sent_at, c.next_http, c.next_event_sent_by
  from geneva._end_running(
    array[p_execution_id], array['step'], array[p_signal], array[p_wait], array[p_job_id], array[true]
  ) c;
end;
$$;

comment on function geneva.complete_and_continue(bigint, text, interval, bigint) is
'Worker protocol: complete_step, then starts and returns the next execution when it is due now and needs no worker condition.';
