-- geneva.complete_steps: complete_step, complete_and_continue,
-- interrupt_step and fail_step (a running step's error) for many executions
-- at once, in one transaction.
--
-- Called by: the Go worker's completer, which gathers the ends of the steps
-- that finish close together and records them with one call and one commit.
-- Each element is what one complete_step (p_continue false) or
-- complete_and_continue (p_continue true) call would be, and is recorded
-- exactly as that call records it: the arrays are parallel, one element per
-- execution; p_waits and p_job_ids elements may be NULL. An element whose
-- signal is interrupt is interrupt_step's give-back. An element with an
-- error (p_errors: an object of classes, chain, message, backtrace and
-- wait_at_least, as fail_step takes them) is fail_step's: its signal is
-- NULL (the policy decides) or a handler's decision, with its wait; when
-- its policy names a handler and it has no decision, nothing is recorded,
-- its job stays the worker's, and its row's action is handler (ask again
-- with the decision). p_replies: an HTTP step's reply for its element (NULL
-- for none), an object of cursor, wait and children, recorded in the same
-- call as the end: its cursor is saved as the element ends (as
-- checkpoint_step would save it just before), its wait read as
-- geneva.parse_wait reads it, the element's wait when its signal takes one
-- (ignored otherwise, once read); its children (a list of objects of type,
-- hero_type, hero_id, group and key; a Go step's StartChildren too) are
-- created with its end when it ends with success (success or finished),
-- children of its workflow (geneva._start_children).
--
-- It is geneva._end_running for every element (cause step, worker or
-- exception, which it tells apart), the one implementation of ending
-- running executions, which complete_step, complete_and_continue,
-- interrupt_step and fail_step call with one element: a batch records each
-- element exactly as a single call would, by construction; it checks the
-- arrays too. (Its body is a single call: a longer one would make its
-- catalog row cross the size where PostgreSQL compresses its argument
-- lists, which every call reads back.)
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
-- what complete_and_continue returns for it, the next execution's workflow
-- (id, type, hero, trace context, group: the element's own but for a
-- waiter taken), and for an error what fail_step returns (action, report,
-- handler).
-- Raises: 22004 for NULL arrays or a NULL execution id; 22023 for arrays of
-- different lengths, an execution named twice, a reply's cursor nested
-- over 64 levels or its wait not one (geneva.parse_wait), children refused
-- (an unknown type, a child that is not an object of strings), or anything
-- complete_step (fail_step) raises for an element;
-- P0002 for an unknown execution. One bad element
-- fails the whole call and nothing is recorded: the worker then records the
-- elements one by one.
create or replace function geneva.complete_steps(
  p_execution_ids bigint[],
  p_signals text[],
  p_waits interval[],
  p_job_ids bigint[],
  p_continue boolean[],
  p_take_waiters boolean default false,
  p_errors jsonb[] default null,
  p_replies jsonb[] default null
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
  next_group_name text,
  action text,
  report boolean,
  handler text,
  next_event_sent_by text
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return query
  select *
  from geneva._end_running(
    p_execution_ids,
    case when p_errors is null and array_position(p_signals, 'interrupt') is null then
      array_fill('step'::text, array[cardinality(p_execution_ids)])
    end,
    p_signals, p_waits, p_job_ids, p_continue, coalesce(p_take_waiters, false), p_errors, p_replies
  );
end;
$$;

comment on function geneva.complete_steps(bigint[], text[], interval[], bigint[], boolean[], boolean, jsonb[], jsonb[]) is
'Worker protocol: complete_step, complete_and_continue, interrupt_step or fail_step for many executions in one call, one result row per element.';
