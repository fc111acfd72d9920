-- geneva.complete_steps: complete_step and complete_and_continue for many
-- executions at once, in one transaction.
--
-- Called by: the Go worker's completer, which gathers the normal ends of the
-- steps that finish close together and records them with one call and one
-- commit. Each element is what one complete_step (p_continue false) or
-- complete_and_continue (p_continue true) call would be, and is recorded
-- exactly as that call records it: the arrays are parallel, one element per
-- execution; p_waits and p_job_ids elements may be NULL.
--
-- It is geneva._end_running with the cause step for every element, the one
-- implementation of ending running executions, which complete_step and
-- complete_and_continue call with one element: a batch records each element
-- exactly as a single call would, by construction.
--
-- Locks: every named execution's workflow row in id order, then each
-- execution row as it ends (geneva._end_running): the order of every other
-- function's locks (workflow, then execution), so that concurrent batches,
-- single calls and operators' calls cannot deadlock.
-- p_take_waiters (the Go worker passes true): an element that continues
-- and whose step passes its slot of its type's concurrency to the key's
-- oldest waiter (others wait for the key) offers to run that waiter next,
-- in the same job, when it can (same queue, no condition of the worker's to
-- evaluate first: geneva._limit_release): it is started here, without a
-- River job of its own, and returned as the element's next execution, with
-- its own workflow's facts. A waiter taken needs no job, fetch or claim: a
-- saturated limit's steps run as an inline chain does, across workflows.
-- A caller that passes it runs a next execution of another workflow; a
-- repeat of a report whose reply was lost does not return a waiter taken
-- (housekeeping recovers it, as it does a step whose worker died).
-- Returns one row per element, named by its position (ordinality, from 1):
-- what complete_and_continue returns for it, and the next execution's
-- workflow (id, type, hero, trace context, group: the element's own but
-- for a waiter taken).
-- Raises: 22004 for NULL arrays or a NULL execution id; 22023 for arrays of
-- different lengths, an execution named twice, or anything complete_step
-- raises for an element; P0002 for an unknown execution. One bad element
-- fails the whole call and nothing is recorded: the worker then records the
-- elements one by one.
create or replace function geneva.complete_steps(
  p_execution_ids bigint[],
  p_signals text[],
  p_waits interval[],
  p_job_ids bigint[],
  p_continue boolean[],
  p_take_waiters boolean default false
)
returns table (
  ordinality integer,
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
  next_workflow_id bigint,
  next_workflow_type text,
  next_hero_type text,
  next_hero_id text,
  next_trace_context text,
  next_group_name text
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_n integer := coalesce(cardinality(p_execution_ids), 0);
begin
  if p_execution_ids is null or p_signals is null or p_waits is null or p_job_ids is null
    or p_continue is null then
    raise exception 'arrays must not be null' using errcode = '22004';
  end if;
  if cardinality(p_signals) <> v_n or cardinality(p_waits) <> v_n
    or cardinality(p_job_ids) <> v_n or cardinality(p_continue) <> v_n then
    raise exception 'arrays of different lengths'
      using errcode = '22023',
            hint = 'Pass one signal, wait, job id and continue flag per execution id.';
  end if;

  return query
  select *
  from geneva._end_running(
    p_execution_ids, array_fill('step'::text, array[v_n]), p_signals, p_waits, p_job_ids, p_continue,
    coalesce(p_take_waiters, false)
  );
end;
$$;

comment on function geneva.complete_steps(bigint[], text[], interval[], bigint[], boolean[], boolean) is
'Worker protocol: complete_step or complete_and_continue for many executions in one call, one result row per element.';
