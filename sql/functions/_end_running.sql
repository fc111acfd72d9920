-- geneva._end_running: ends running executions as their workers report them,
-- set-wise, and moves their workflows on: the one implementation behind
-- complete_step, complete_and_continue, complete_steps and interrupt_step
-- (each a batch of it; fail_step resolves a policy first and ends its
-- execution through the same table and geneva._advance).
--
-- Each element is (execution, cause, signal, wait, job, continue): what
-- geneva._signal_effects' row for the cause (step: what the step returned;
-- worker: interrupt, a shutting-down worker gives the step back) and signal
-- does to the execution and its workflow. Per element, in order:
--   the execution is not in_progress (a late or duplicate report, say after
--     housekeeping recovered it): nothing is recorded. A worker calling with
--     continue again because the reply to a call that committed was lost gets
--     the step that call started (the workflow's next execution, in_progress
--     without a job), or no one would run it until housekeeping found it
--     stuck;
--   the workflow is not performing: the execution ends as the (stray,
--     cancel) row says, and the workflow stays as it is;
--   otherwise the execution ends as the signal's row says (its metadata
--     merged; a rewind's successor starts without the cursor) and
--     geneva._advance_many moves the workflow (with continue: a next step due
--     now is started here, for the worker to run in the same job).
-- The River jobs the reports name are completed (state running only), as
-- River's JobCompleteTx would, whatever was recorded.
--
-- Called by: complete_steps, complete_step, complete_and_continue,
-- interrupt_step, which check their own arguments first.
-- Locks: every named execution's workflow row in id order, then every
-- execution row in id order (geneva._lock_executions).
-- Returns one row per element, by position (ordinality, from 1): the outcome
-- recorded (NULL: nothing), the workflow's state after it, and the execution
-- started for the worker to run next (NULLs when none).
-- Plans: as complete_steps.
-- Raises: 22004 for a NULL execution id or signal; 22023 for an unknown
-- signal, a wait with a signal that takes none, a negative wait or one over
-- 100 years, an execution named twice, or a job that did not run its
-- execution (geneva._check_job); P0002 for an unknown execution. One bad
-- element fails the whole call and nothing is recorded.
create or replace function geneva._end_running(
  p_execution_ids bigint[],
  p_causes text[],
  p_signals text[],
  p_waits interval[],
  p_job_ids bigint[],
  p_continue boolean[]
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
  next_continues_from_id bigint
)
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
  v_bad record;
  v_moves record;
  v_kinds text[];
  v_outcomes text[];
begin
  -- guard: every signal is one its cause has, and only those that run the
  -- same step again take a wait
  select i.ord, i.cause, i.signal, i.wait, x.workflow_move into v_bad
  from unnest(p_causes, p_signals, p_waits) with ordinality as i (cause, signal, wait, ord)
  left join geneva._signal_effects() x on x.cause = i.cause and x.signal = i.signal
  where x.signal is null or (i.wait is not null and x.workflow_move <> 'same')
  order by i.ord
  limit 1;
  if found then
    if v_bad.signal is null then
      raise exception 'signal must not be null' using errcode = '22004';
    elsif v_bad.workflow_move is null then
      raise exception 'unknown signal %', v_bad.signal
        using errcode = '22023',
              hint = format('Signals are %s.', (
                select string_agg(e.signal, ', ') from geneva._signal_effects() e where e.cause = v_bad.cause
              ));
    else
      raise exception 'signal % takes no wait', v_bad.signal
        using errcode = '22023',
              hint = format('Only %s take a wait.', (
                select string_agg(e.signal, ', ') from geneva._signal_effects() e
                where e.cause = v_bad.cause and e.workflow_move = 'same'
              ));
    end if;
  end if;
  perform geneva._check_wait(w.wait, 'signal ' || p_signals[w.ord])
  from unnest(p_waits) with ordinality as w (wait, ord)
  where w.wait is not null;

  -- the locks, in the one order: workflows by id, then executions by id
  perform geneva._lock_executions(p_execution_ids);
  select i.execution_id into v_bad
  from unnest(p_execution_ids) as i (execution_id)
  where not exists (select from geneva.step_executions e where e.id = i.execution_id)
  limit 1;
  if found then
    raise exception 'step execution % not found', v_bad.execution_id
      using errcode = 'P0002',
            table = 'step_executions';
  end if;

  -- each report names a job that ran its execution, or none
  perform geneva._check_job(e, p_job_ids[i.ord])
  from unnest(p_execution_ids) with ordinality as i (execution_id, ord)
  join geneva.step_executions e on e.id = i.execution_id
  where p_job_ids[i.ord] is distinct from e.job_id and p_job_ids[i.ord] is not null;

  -- what each report ends (its kind: moved_on, stray or end), and the
  -- outcome the table gives it
  select array_agg(i.kind order by i.ord), array_agg(x.outcome order by i.ord)
  into v_kinds, v_outcomes
  from (
    select i.ord, p_causes[i.ord] as cause, p_signals[i.ord] as signal,
      case
        when e.state <> 'in_progress' then 'moved_on'
        when w.state <> 'performing' then 'stray'
        else 'end'
      end as kind
    from unnest(p_execution_ids) with ordinality as i (execution_id, ord)
    join geneva.step_executions e on e.id = i.execution_id
    join geneva.workflows w on w.id = e.workflow_id
  ) i
  left join geneva._signal_effects() x
    on (i.kind = 'end' and x.cause = i.cause and x.signal = i.signal)
    or (i.kind = 'stray' and x.cause = 'stray' and x.signal = 'cancel');

  -- the executions end (geneva._end_execution, set-wise: all were in_progress)
  perform pg_catalog.set_config('geneva.ending', 'on', true);
  update geneva.step_executions e
  set state = x.execution_state,
    outcome = x.outcome,
    completed_at = case when x.execution_state = 'completed' then v_now else e.completed_at end,
    failed_at = case when x.execution_state = 'failed' then v_now else e.failed_at end,
    canceled_at = case when x.execution_state = 'canceled' then v_now else e.canceled_at end,
    skipped_at = case when x.execution_state = 'skipped' then v_now else e.skipped_at end,
    finished_at = v_now,
    metadata = case when x.metadata is null then e.metadata else e.metadata || x.metadata end,
    updated_at = v_now
  from unnest(p_execution_ids, v_kinds) with ordinality as t (execution_id, kind, ord)
  join geneva._signal_effects() x
    on (t.kind = 'end' and x.cause = p_causes[t.ord] and x.signal = p_signals[t.ord])
    or (t.kind = 'stray' and x.cause = 'stray' and x.signal = 'cancel')
  where e.id = t.execution_id and t.kind in ('end', 'stray');
  perform pg_catalog.set_config('geneva.ending', '', true);

  -- the workflows move on, in one batch
  select array_agg(e.workflow_id order by e.workflow_id) as workflow_ids,
    array_agg(x.workflow_move order by e.workflow_id) as moves,
    array_agg(e.step_name order by e.workflow_id) as step_names,
    array_agg(p_waits[t.ord] order by e.workflow_id) as waits,
    array_agg(e.id order by e.workflow_id) as from_ids,
    array_agg(coalesce(p_continue[t.ord], false) order by e.workflow_id) as inline
  into v_moves
  from unnest(p_execution_ids, v_kinds) with ordinality as t (execution_id, kind, ord)
  join geneva.step_executions e on e.id = t.execution_id
  join geneva._signal_effects() x on x.cause = p_causes[t.ord] and x.signal = p_signals[t.ord]
  where t.kind = 'end';
  if v_moves.workflow_ids is not null then
    perform from geneva._advance_many(
      v_moves.workflow_ids, v_moves.moves, v_moves.step_names, v_moves.waits, v_moves.from_ids, v_moves.inline
    );
  end if;

  -- the River jobs that ran these steps are done (geneva._complete_job)
  update public.river_job j
  set state = 'completed',
    finalized_at = now()
  where j.id = any (p_job_ids)
    and j.state::text = 'running';

  return query
  select t.ord::integer, v_outcomes[t.ord], w.state, n.id, n.step_name, n.attempt, n.started_at, n.cursor,
    n.continues_from_id
  from unnest(p_execution_ids, v_kinds) with ordinality as t (execution_id, kind, ord)
  join geneva.step_executions e on e.id = t.execution_id
  join geneva.workflows w on w.id = e.workflow_id
  left join lateral (
    select s.*
    from geneva.step_executions s
    where w.state = 'performing'
      and s.workflow_id = w.id
      and s.state = 'in_progress'
      and (
        t.kind = 'end'
        -- a repeated report with continue: the step its first call started
        or t.kind = 'moved_on' and coalesce(p_continue[t.ord], false)
          and s.job_id is null and s.id > e.id
          and not exists (
            select from geneva.step_executions b
            where b.workflow_id = w.id and b.id > e.id and b.id < s.id
          )
      )
  ) n on true
  order by t.ord;
end;
$$;
