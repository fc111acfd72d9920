-- geneva.start_step: claims a step execution for a worker, or records the
-- outcome of the worker's preconditions: start_steps, which documents what
-- happens, for a batch of one.
--
-- Called by: workers that claim one execution at a time (workers in other
-- languages), after evaluating the workflow's cancel_if and the step's skip_if
-- (p_precondition 'cancel' or 'skip'; 'hero_missing' when its hero loader
-- found nothing; NULL when the step should run). Calling it again, early, or
-- for an execution that has moved on is harmless.
--
-- Locks: the workflow row, then the execution row.
-- Returns one row when the worker should run the step now: the execution is
-- then in_progress and the workflow performing; with the workflow type's queue
-- and the trace context its creator stored, and the event it consumed (with
-- who sent it and when); no row otherwise.
-- Raises: 22004 for a NULL id; 22023 for an unknown precondition; P0002 for an
-- unknown execution.
create or replace function geneva.start_step(
  p_execution_id bigint,
  p_precondition text default null
)
returns table (
  execution_id bigint,
  workflow_id bigint,
  workflow_type text,
  hero_type text,
  hero_id text,
  step_name text,
  attempt integer,
  scheduled_for timestamptz,
  started_at timestamptz,
  cursor jsonb,
  continues_from_id bigint,
  queue text,
  trace_context text,
  event_id bigint,
  event_name text,
  event_payload jsonb,
  event_sent_at timestamptz,
  group_name text,
  http jsonb,
  idempotency_key bigint,
  event_sent_by text
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return query
  select s.execution_id, s.workflow_id, s.workflow_type, s.hero_type, s.hero_id, s.step_name, s.attempt,
    s.scheduled_for, s.started_at, s.cursor, s.continues_from_id, s.queue, s.trace_context,
    s.event_id, s.event_name, s.event_payload, s.event_sent_at, s.group_name, s.http, s.idempotency_key,
    s.event_sent_by
  from geneva.start_steps(array[p_execution_id], array[p_precondition]) s;
end;
$$;

comment on function geneva.start_step(bigint, text) is
'Worker protocol: claims a due scheduled execution (one row back) or records its preconditions (no row).';
