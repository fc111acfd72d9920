-- geneva._end_executions: moves executions to their end states, set-wise,
-- and counts them: the one place an execution ends (the only update made
-- with geneva.ending on, which sql/guards/step_executions_guard_state
-- requires of an end).
--
-- Called by: geneva._end_execution (a batch of one, for every function that
-- ends one execution) and geneva._end_running (a worker's batch of reports).
-- The caller holds the locks of the executions' workflows, then of the
-- executions, and has checked that each is active.
--
-- Per element (the arrays are parallel; an element whose state is NULL is
-- left as it is): sets the state, its outcome, the state's own timestamp and
-- finished_at, and merges the element's metadata into the execution's. The
-- error columns (error_class_name, error_message, error_backtrace,
-- error_classes) are written when given, for every element (one
-- execution's error: geneva._end_execution; a batch's are written by
-- geneva._end_running, before).
--
-- Counts what ended in geneva.ended_execution_deltas, for geneva.step_stats,
-- geneva.step_throughput and geneva.engine_metrics: one row per minute (UTC),
-- type, step and outcome, with how many ended, how many of them ran, and the
-- bucket of each one's queue lag (started - scheduled) and run time (ended -
-- started) (geneva._duration_bucket). Appends only: concurrent transactions
-- never wait on one another's counts. (In the same statement as the end,
-- not in a statement trigger: a transition table kept the rows of every
-- update of an execution, claims and heartbeats included. Executions
-- inserted already ended, an import's history, are counted by
-- sql/counts/step_executions_count_inserted.)
--
-- Plans: its own settings hold its statement to lookups by id (an update
-- planned while the tables were small must not scan them).
-- Returns the slots of limits the ended executions held (limit_keys), one
-- row per key and execution, for the caller to free or pass on
-- (geneva._limit_release).
create or replace function geneva._end_executions(
  p_execution_ids bigint[],
  p_states text[],
  p_outcomes text[],
  p_metadata jsonb[],
  p_error_class_name text default null,
  p_error_message text default null,
  p_error_backtrace text default null,
  p_error_classes text[] default null
)
returns table (limit_key text, workflow_id bigint)
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
as $$
#variable_conflict use_column
declare
  v_now timestamptz := geneva.now();
begin
  perform pg_catalog.set_config('geneva.ending', 'on', true);
  return query
  with ended as (
    update geneva.step_executions e
    set state = t.state,
      outcome = t.outcome,
      completed_at = case when t.state = 'completed' then v_now else e.completed_at end,
      failed_at = case when t.state = 'failed' then v_now else e.failed_at end,
      canceled_at = case when t.state = 'canceled' then v_now else e.canceled_at end,
      skipped_at = case when t.state = 'skipped' then v_now else e.skipped_at end,
      finished_at = v_now,
      -- (a waiter that ends waits no more: step_executions_state_valid)
      limit_wait_key = null,
      error_class_name = coalesce(p_error_class_name, e.error_class_name),
      error_message = coalesce(p_error_message, e.error_message),
      error_backtrace = coalesce(p_error_backtrace, e.error_backtrace),
      error_classes = coalesce(p_error_classes, e.error_classes),
      metadata = case when t.metadata is null then e.metadata else e.metadata || t.metadata end,
      updated_at = v_now
    from unnest(p_execution_ids, p_states, p_outcomes, p_metadata) as t (execution_id, state, outcome, metadata)
    where e.id = t.execution_id and t.state is not null
    returning e.workflow_id, e.step_name, e.outcome, e.scheduled_for, e.started_at, e.limit_keys
  ),
  counted as (
    insert into geneva.ended_execution_deltas (
      minute, workflow_type, step_name, outcome, executions, runs, queue_lag, run_time
    )
    select date_trunc('minute', v_now, 'UTC'), x.workflow_type, x.step_name, x.outcome, count(*), count(x.started_at),
      coalesce(array_agg(geneva._duration_bucket(x.started_at - x.scheduled_for)) filter (where x.started_at is not null), '{}'),
      coalesce(array_agg(geneva._duration_bucket(v_now - x.started_at)) filter (where x.started_at is not null), '{}')
    from (
      -- (each workflow's type by its key: the plan is cached for the session)
      select (select w.workflow_type from geneva.workflows w where w.id = n.workflow_id) as workflow_type,
        n.step_name, n.outcome, n.scheduled_for, n.started_at
      from ended n
    ) x
    group by x.workflow_type, x.step_name, x.outcome
  )
  select k.key, n.workflow_id
  from ended n, unnest(n.limit_keys) as k (key)
  where n.limit_keys is not null;
  perform pg_catalog.set_config('geneva.ending', '', true);
end;
$$;
