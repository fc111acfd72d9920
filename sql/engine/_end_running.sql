-- geneva._end_running: ends running executions as their workers report them,
-- set-wise, and moves their workflows on: the one implementation behind
-- complete_step, complete_and_continue, complete_steps, interrupt_step and
-- fail_step (a running step's error; each a batch of it).
--
-- Each element is (execution, cause, signal, wait, job, continue, error):
-- what geneva._signal_effects' row for the cause (step: what the step
-- returned; worker: interrupt, a shutting-down worker gives the step back;
-- exception: the step raised an error) and signal does to the execution and
-- its workflow. A failure (cause exception, its error an object of
-- p_errors: classes, the names its policies match; chain, the classes to
-- record, classes when empty; message; backtrace; wait_at_least, an
-- interval) has its signal and wait decided by geneva._exception_effect: its
-- element's signal is NULL, or a handler's decision (with its wait); a
-- failure whose policy names a handler and that has no decision is an ask:
-- nothing is recorded, its job stays the worker's, and its row names the
-- handler (action handler). Its error columns are written as it ends (with
-- a reply's cursor, by a statement of their own before the end's).
-- p_causes NULL: each element's cause is exception when it has an error,
-- worker when its signal is interrupt, else step (complete_steps' mixed
-- elements). An element's HTTP reply of p_replies (an object of cursor,
-- wait and children; NULL for none) is recorded with its end: its cursor
-- saved as its execution ends, its wait read as
-- geneva.parse_wait reads it, the element's wait when its signal takes one
-- (ignored otherwise, once read), its children (a Go step's too) created
-- when it ends with success (geneva._start_children).
-- Per element, in order:
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
--     now is started here, for the worker to run in the same job; with
--     continue and p_take_waiters, when the step passes its slot of its
--     type's concurrency to a waiter, that waiter, if the worker can run it,
--     is started for it instead: geneva._limit_release).
-- Limits are the limits functions': what becomes of the slot a step held
-- (carried on, or its next step waiting: geneva._limit_next), then every
-- slot not carried freed or passed on (geneva._limit_release).
-- The River jobs the reports name are completed (state running only), as
-- River's JobCompleteTx would, whatever was recorded.
--
-- Called by: complete_steps, complete_step, complete_and_continue,
-- interrupt_step, fail_step.
-- Locks: every named execution's workflow row in id order
-- (geneva._lock_executions); each execution row by the update that ends it;
-- the slots freed and their keys' locks (geneva._limit_release).
-- Returns one row per element, by position (ordinality, from 1): the outcome
-- recorded (NULL: nothing), the workflow's state after it, for a failure
-- the action applied (the signal, or handler for an ask), whether to report
-- the error and the handler its policy names, and the execution
-- started for the worker to run next, with the event it carries (its
-- sender last, next_event_sent_by), its step's
-- "http" (geneva._step_http) and its workflow's facts (those of the
-- element's own workflow but for a waiter taken) (NULLs when none).
-- Plans: as complete_steps.
-- Raises: 22004 for NULL arrays, a NULL execution id or signal; 22023 for
-- arrays of different lengths, an unknown signal, a wait with a signal that
-- takes none, a negative wait or one over 100 years, a reply's wait that is
-- none (geneva.parse_wait) or cursor nested over 64 levels, an execution
-- named twice, a job that did not run its execution (geneva._check_job), or
-- a handler's decision where no handler applies (geneva._exception_effect),
-- children refused (geneva._start_children);
-- P0002 for an unknown execution. One bad element fails the whole call and
-- nothing is recorded.
create or replace function geneva._end_running(
  p_execution_ids bigint[],
  p_causes text[],
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
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
as $$
#variable_conflict use_column
declare
  v_now timestamptz := geneva.now();
  v_c record;
  v_freed text[];
  v_freed_by bigint[];
  v_carry text[];
  v_wait text[];
  v_take text[];
  v_takers bigint[];
  v_taken bigint[];
  v_kept bigint[];
  -- (p_causes, p_signals and p_waits are set below where the replies, the
  -- errors or p_causes NULL decide them: the statements that follow read
  -- the arguments, as they do when nothing is to decide; v_jobs: the jobs
  -- to complete, without those of asks)
  v_jobs bigint[];
  v_cursors jsonb[];
  v_effects jsonb[];
  v_end_metadata jsonb[];
  v_errors jsonb[];
  v_actions text[];
  v_reports boolean[];
  v_handlers text[];
begin
  if p_execution_ids is null or p_signals is null or p_waits is null or p_job_ids is null
    or p_continue is null then
    raise exception 'arrays must not be null' using errcode = '22004';
  end if;
  if cardinality(p_signals) <> cardinality(p_execution_ids) or cardinality(p_waits) <> cardinality(p_execution_ids)
    or cardinality(p_job_ids) <> cardinality(p_execution_ids) or cardinality(p_continue) <> cardinality(p_execution_ids)
    or cardinality(p_errors) <> cardinality(p_execution_ids) or cardinality(p_replies) <> cardinality(p_execution_ids) then
    raise exception 'arrays of different lengths'
      using errcode = '22023',
            hint = 'Pass one signal, wait, job id and continue flag (and error and reply, if any) per execution id.';
  end if;

  -- each element's cause, by what it carries
  if p_causes is null then
    p_causes := array(
      select case when x.error is not null then 'exception' when x.signal = 'interrupt' then 'worker' else 'step' end
      from unnest(p_signals, p_errors) with ordinality as x (signal, error, ord)
      order by x.ord
    );
  end if;
  -- HTTP replies: their cursors (a worker could not decode a deeper one for
  -- the next execution) and their waits
  if p_replies is not null then
    perform geneva._check_json_depth(r -> 'cursor', 'cursor') from unnest(p_replies) r where r ? 'cursor';
    select array_agg(
        case
          when x.reply is null or jsonb_typeof(x.reply -> 'wait') is null then x.wait
          -- (read, and so refused when it is no wait, whatever the signal)
          when geneva.parse_wait(x.reply -> 'wait') = interval '0' or e.workflow_move is distinct from 'same' then null
          else geneva.parse_wait(x.reply -> 'wait')
        end
        order by x.ord
      ),
      array_agg(nullif(x.reply -> 'cursor', 'null'::jsonb) order by x.ord)
    into p_waits, v_cursors
    from unnest(p_signals, p_waits, p_replies) with ordinality as x (signal, wait, reply, ord)
    left join geneva._signal_effects() e on e.cause = 'step' and e.signal = x.signal;
  end if;

  -- the workflows' locks, by id (the executions are locked by their ends'
  -- update: geneva._lock_executions)
  perform geneva._lock_executions(p_execution_ids, p_executions => false);

  -- the failures: what each error does (geneva._exception_effect), for
  -- those still running in a performing workflow
  if p_errors is not null then
    select array_agg(coalesce(f.cause, i.cause) order by i.ord),
      array_agg(case when f.cause is null then i.signal else f.signal end order by i.ord),
      array_agg(case when f.cause is null then i.wait else f.wait end order by i.ord),
      array_agg(coalesce(x.metadata || f.metadata, x.metadata, f.metadata) order by i.ord),
      array_agg(case when f.cause is not null then coalesce(f.signal, 'handler') end order by i.ord),
      array_agg(f.report order by i.ord),
      array_agg(f.handler order by i.ord),
      array_agg(
        case when f.signal is not null then jsonb_strip_nulls(jsonb_build_object(
          'class_name', f.chain ->> 0,
          'message', i.error ->> 'message',
          'backtrace', i.error ->> 'backtrace',
          'classes', f.chain
        )) end
        order by i.ord
      ),
      -- (an ask's job stays the worker's)
      array_agg(case when f.cause is null or f.signal is not null then p_job_ids[i.ord] end order by i.ord)
    into p_causes, p_signals, p_waits, v_effects, v_actions, v_reports, v_handlers, v_errors, v_jobs
    from unnest(p_execution_ids, p_causes, p_signals, p_waits, p_errors)
      with ordinality as i (execution_id, cause, signal, wait, error, ord)
    left join geneva.step_executions e on e.id = i.execution_id
    left join geneva.workflows w on w.id = e.workflow_id
    left join lateral (
      select x.*,
        case when jsonb_array_length(i.error -> 'chain') > 0 then i.error -> 'chain' else i.error -> 'classes' end
          as chain
      from geneva._exception_effect(
          (select d from geneva.workflow_definitions d where d.workflow_type = w.workflow_type), e.step_name,
          array(select jsonb_array_elements_text(coalesce(i.error -> 'classes', '[]'))),
          geneva._exception_reattempts(w.id, e.step_name),
          i.signal, i.wait, (i.error ->> 'wait_at_least')::interval
        ) x
      -- (a one-time filter: only a failure still running is decided; not
      -- pulled up into the join, where it would filter the function's rows)
      where i.error is not null and i.cause = 'exception' and e.state = 'in_progress'
        and w.state = 'performing'
      offset 0
    ) f on true
    left join geneva._signal_effects() x on x.cause = f.cause and x.signal = f.signal;
  end if;

  -- In one pass over the elements: what each report ends (its kind:
  -- moved_on, stray or end) and the outcome the table gives it, the moves of
  -- the workflows that go on, and the first bad element, if any.
  select
    array_agg(c.kind order by c.ord) as kinds,
    array_agg(c.outcome order by c.ord) as outcomes,
    array_agg(c.end_state order by c.ord) as end_states,
    array_agg(c.end_metadata order by c.ord) as end_metadata,
    array_agg(c.workflow_id order by c.workflow_id) filter (where c.kind = 'end') as workflow_ids,
    array_agg(c.move order by c.workflow_id) filter (where c.kind = 'end') as moves,
    array_agg(c.step_name order by c.workflow_id) filter (where c.kind = 'end') as step_names,
    array_agg(c.wait order by c.workflow_id) filter (where c.kind = 'end') as waits,
    -- (only a move that runs the same step again continues from it)
    array_agg(case when c.move = 'same' then c.execution_id end order by c.workflow_id)
      filter (where c.kind = 'end') as from_ids,
    array_agg(c.inline order by c.workflow_id) filter (where c.kind = 'end') as inline,
    min(c.ord) filter (where c.bad is not null) as bad_ord,
    bool_or(c.other_job) as other_job
  into v_c
  from (
    select i.ord, e.id as execution_id, e.workflow_id, e.step_name, i.wait,
      coalesce(p_continue[i.ord], false) as inline,
      case
        when e.state <> 'in_progress' then 'moved_on'
        when w.state <> 'performing' then 'stray'
        -- (a failure left without a signal: its handler decides first)
        when i.signal is null and i.cause = 'exception' then 'ask'
        else 'end'
      end as kind,
      case
        when e.state <> 'in_progress' then null
        when w.state <> 'performing' then (
          select s.outcome from geneva._signal_effects() s where s.cause = 'stray' and s.signal = 'cancel'
        )
        else x.outcome
      end as outcome,
      case
        when e.state <> 'in_progress' then null
        when w.state <> 'performing' then (
          select s.execution_state from geneva._signal_effects() s where s.cause = 'stray' and s.signal = 'cancel'
        )
        else x.execution_state
      end as end_state,
      case when e.state = 'in_progress' and w.state = 'performing' then x.metadata end as end_metadata,
      x.workflow_move as move,
      case
        -- (a failure not ended: its execution moved on, or it asks)
        when i.signal is null and i.cause = 'exception' then case when e.id is null then 'not_found' end
        when i.signal is null then 'null_signal'
        when x.signal is null then 'unknown_signal'
        when i.wait is not null and x.workflow_move <> 'same' then 'wait'
        when i.wait < interval '0' or extract(epoch from i.wait) > 3155760000 then 'bad_wait'
        when e.id is null then 'not_found'
      end as bad,
      p_job_ids[i.ord] is not null and p_job_ids[i.ord] is distinct from e.job_id as other_job
    from unnest(p_execution_ids, p_causes, p_signals, p_waits) with ordinality as i (execution_id, cause, signal, wait, ord)
    left join geneva.step_executions e on e.id = i.execution_id
    left join geneva.workflows w on w.id = e.workflow_id
    -- (a row's lookup stops at its row, rows being unique by cause and
    -- signal: a join read the whole table for each element)
    left join lateral (
      select x.* from geneva._signal_effects() x where x.cause = i.cause and x.signal = i.signal limit 1
    ) x on true
    -- (a stray's outcome: subqueries that run only when there is one)
    -- (not folded into the aggregates: each would copy the CASEs it reads)
    offset 0
  ) c;

  -- guard: every signal is one its cause has, only those that run the same
  -- step again take a wait, and every execution exists
  if v_c.bad_ord is not null then
    perform geneva._end_running_refuse(
      p_execution_ids[v_c.bad_ord], p_causes[v_c.bad_ord], p_signals[v_c.bad_ord], p_waits[v_c.bad_ord]
    );
  end if;
  -- guard: each report names a job that ran its execution, or none
  if v_c.other_job then
    perform geneva._check_job(e, p_job_ids[i.ord])
    from unnest(p_execution_ids) with ordinality as i (execution_id, ord)
    join geneva.step_executions e on e.id = i.execution_id
    where p_job_ids[i.ord] is distinct from e.job_id and p_job_ids[i.ord] is not null;
  end if;

  -- the failures' errors and the replies' cursors, written first (a second
  -- version of those rows: a statement the other ends do not set up), and
  -- what each failure's effect adds to its metadata
  if v_effects is not null then
    select array_agg(coalesce(m.effect, m.metadata) order by m.ord) into v_end_metadata
    from unnest(v_c.end_metadata, v_effects) with ordinality as m (metadata, effect, ord);
  end if;
  if v_errors is not null or v_cursors is not null then
    update geneva.step_executions e
    set error_class_name = coalesce(x.error ->> 'class_name', e.error_class_name),
      error_message = coalesce(x.error ->> 'message', e.error_message),
      error_backtrace = coalesce(x.error ->> 'backtrace', e.error_backtrace),
      error_classes = coalesce(
        case when x.error ? 'classes' then array(select jsonb_array_elements_text(x.error -> 'classes')) end,
        e.error_classes
      ),
      cursor = coalesce(x.cursor, e.cursor)
    from unnest(p_execution_ids, v_errors, v_cursors, v_c.end_states) as x (id, error, cursor, end_state)
    where e.id = x.id and x.end_state is not null and (x.error is not null or x.cursor is not null);
  end if;

  -- the executions end (geneva._end_executions), returning the slots of
  -- limits they held
  select array_agg(x.limit_key order by x.limit_key, x.workflow_id),
    array_agg(x.workflow_id order by x.limit_key, x.workflow_id)
  into v_freed, v_freed_by
  from geneva._end_executions(
    p_execution_ids, v_c.end_states, v_c.outcomes, coalesce(v_end_metadata, v_c.end_metadata)
  ) x;

  -- the children the steps that succeeded start with their ends (their
  -- replies' "children": geneva._start_children), before their workflows
  -- move on
  if p_replies is not null then
    perform geneva._start_children(array_agg(e.workflow_id order by x.ord), array_agg(x.reply -> 'children' order by x.ord))
    from unnest(p_execution_ids, p_replies, p_causes, v_c.kinds, v_c.outcomes)
      with ordinality as x (execution_id, reply, cause, kind, outcome, ord)
    join geneva.step_executions e on e.id = x.execution_id
    where x.reply ? 'children' and x.kind = 'end' and x.cause = 'step' and x.outcome = 'success'
    having count(*) > 0;
  end if;

  -- Limits: the slot of its type's concurrency a step held is carried on by
  -- its next step, or its next step waits behind the key's waiters
  -- (geneva._limit_next)
  if v_freed is not null and v_c.workflow_ids is not null then
    select n.carry_keys, n.wait_keys, n.take_queues into v_carry, v_wait, v_take
    from geneva._limit_next(v_c.workflow_ids, v_c.moves, p_execution_ids, v_c.kinds, p_continue, p_take_waiters) n;
  end if;

  -- the workflows move on, in one batch (those whose next step started
  -- holding its step's slot: v_kept)
  if v_c.workflow_ids is not null then
    v_kept := geneva._advance_many(
      v_c.workflow_ids, v_c.moves, v_c.step_names, v_c.waits, v_c.from_ids, v_c.inline, v_carry, v_wait
    );
  end if;

  -- Limits: every slot the ended steps held, but one its next step started
  -- holding (carried), is freed or passed to the key's oldest waiter; a
  -- waiter the worker of a step that continues can run next is woken for
  -- it (geneva._limit_release) and started for it below
  -- (a carried slot is its step's only one)
  if v_freed is not null and cardinality(v_freed) > coalesce(cardinality(v_kept), 0) then
    if v_kept is not null or p_take_waiters and array_remove(v_take, null) <> '{}' then
      select array_agg(f.key order by f.key, f.workflow_id), array_agg(f.workflow_id order by f.key, f.workflow_id),
        array_agg(t.queue order by f.key, f.workflow_id)
      into v_freed, v_freed_by, v_take
      from unnest(v_freed, v_freed_by) as f (key, workflow_id)
      left join unnest(v_c.workflow_ids, v_take) as t (workflow_id, queue)
        on t.workflow_id = f.workflow_id and p_take_waiters
      where v_kept is null or not f.workflow_id = any (v_kept);
    else
      v_take := null;
    end if;
    if v_freed is not null then
      select array_agg(r.taken_by), array_agg(r.started_id)
      into v_takers, v_taken
      from geneva._limit_release(v_freed, v_freed_by, case when p_take_waiters then v_take end) r;
    end if;
  end if;

  -- the River jobs that ran these steps are done (geneva._complete_job)
  update public.river_job j
  set state = 'completed',
    finalized_at = now()
  where j.id = any (coalesce(v_jobs, p_job_ids))
    and j.state::text = 'running';

  return query
  select t.ord::integer, v_c.outcomes[t.ord], w.state, n.id, n.step_name, n.attempt, n.started_at, n.cursor,
    n.continues_from_id, ev.id, ev.name, ev.payload, ev.sent_at,
    (
      select geneva._step_http(d.definition, d.step_names, n.step_name)
      from geneva.workflow_definitions d
      where n.id is not null and d.workflow_type = w.workflow_type
    ),
    case when n.id is not null then w.id end, case when n.id is not null then w.workflow_type end,
    case when n.id is not null then w.hero_type end, case when n.id is not null then w.hero_id end,
    case when n.id is not null then w.trace_context end, case when n.id is not null then w.group_name end,
    v_actions[t.ord], v_reports[t.ord], v_handlers[t.ord], ev.sent_by
  from unnest(p_execution_ids, v_c.kinds) with ordinality as t (execution_id, kind, ord)
  join geneva.step_executions e on e.id = t.execution_id
  join geneva.workflows w on w.id = e.workflow_id
  left join lateral (
    select a.*
    from (
      -- (the workflow's active execution, by its key: filtered in the query
      -- above, not here, so that its generic plan reads the index of active
      -- executions for this workflow, not every execution in progress, and
      -- the index entries of those ended since the last vacuum, for each
      -- element)
      select s.*
      from geneva.step_executions s
      where s.workflow_id = w.id and s.state in ('scheduled', 'in_progress')
      offset 0
    ) a
    where w.state = 'performing'
      and a.state = 'in_progress'
      and (
        t.kind = 'end'
        -- a repeated report with continue: the step its first call started
        or t.kind = 'moved_on' and coalesce(p_continue[t.ord], false)
          and a.job_id is null and a.id > e.id
          and not exists (
            select from geneva.step_executions b
            where b.workflow_id = w.id and b.id > e.id and b.id < a.id
          )
      )
  ) n on true
  left join geneva.events ev on ev.id = n.event_id
  -- (an element whose worker took a waiter: its row is below)
  where v_takers is null or not (t.kind = 'end' and w.id = any (v_takers))
  order by t.ord;

  -- the elements whose workers took a waiter of another workflow
  -- (geneva._limit_release): the waiter starts in the slot it was handed,
  -- as a claim would start it (start_steps' last statement's two writes,
  -- written again here: a claim through start_steps cost a saturated
  -- limit's step 13% more instructions, bench/NOTES.md), and its row is
  -- returned with its workflow's facts
  if v_takers is not null then
    return query
    with started as (
      update geneva.step_executions e
      set state = 'in_progress',
        started_at = v_now,
        limit_keys = array[e.limit_wait_key],
        limit_wait_key = null,
        updated_at = v_now
      from unnest(v_taken) as x (id)
      where e.id = x.id
      returning e.id, e.workflow_id, e.step_name, e.attempt, e.started_at, e.cursor, e.continues_from_id, e.event_id
    ),
    moved as (
      update geneva.workflows w
      set state = 'performing',
        current_step_name = s.step_name,
        started_at = coalesce(w.started_at, v_now),
        updated_at = v_now
      from started s
      where w.id = s.workflow_id
      returning w.id, w.workflow_type, w.hero_type, w.hero_id, w.trace_context, w.group_name
    )
    select t.ord::integer, v_c.outcomes[t.ord], w.state, x.id, x.step_name, x.attempt, x.started_at, x.cursor,
      x.continues_from_id, ev.id, ev.name, ev.payload, ev.sent_at,
      geneva._step_http(d.definition, d.step_names, x.step_name),
      xw.id, xw.workflow_type, xw.hero_type, xw.hero_id, xw.trace_context, xw.group_name,
      v_actions[t.ord], v_reports[t.ord], v_handlers[t.ord], ev.sent_by
    from unnest(p_execution_ids, v_c.kinds) with ordinality as t (execution_id, kind, ord)
    join geneva.step_executions e on e.id = t.execution_id
    join geneva.workflows w on w.id = e.workflow_id
    join unnest(v_takers, v_taken) as k (taken_by, execution_id) on k.taken_by = w.id
    join started x on x.id = k.execution_id
    join moved xw on xw.id = x.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = xw.workflow_type
    left join geneva.events ev on ev.id = x.event_id
    where t.kind = 'end'
    order by t.ord;
  end if;
end;
$$;
