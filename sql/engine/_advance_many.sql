-- geneva._advance_many: moves workflows on after an execution of each has
-- ended (or, for an operator's verbs, without one): schedules what runs next,
-- or finishes, cancels or pauses each workflow. The one implementation of a
-- workflow's move, set-wise: geneva._advance is a batch of one, and
-- complete_steps passes its whole batch.
--
-- Called by: geneva._advance, geneva._end_running, start_steps,
-- geneva.create_workflows. The caller holds every workflow's lock (and the
-- locks of the executions it ended), or has just inserted the workflow, and
-- has already ended the execution that brought each workflow here
-- (p_from_ids, when there is one). Each workflow appears once.
--
-- Per element (the arrays are parallel):
--   p_moves  next    the step after p_step_names in the current step list,
--                    after that step's own wait (and no earlier than the
--                    workflow's created_at plus its "after"); finish when it is the last
--                    step; pause when it is no longer defined (a deploy
--                    removed it while it ran: the workflow stops rather than
--                    skip what remains)
--            skip    as next, but finish when the step is no longer defined
--                    (an operator's skip of a step that is gone)
--            first   the first step of the current step list, after its own
--                    wait (create_workflows: the workflow row is inserted as
--                    this move would leave it, ready with that step next, so
--                    it is not written again here)
--            same    p_step_names again, at now + p_waits (reattempts,
--                    recovery, a resumable step's hand-over): the new
--                    execution counts one more attempt than p_from_ids' and
--                    continues its cursor (none when p_from_ids' metadata
--                    says rewind)
--            finish  the workflow is finished
--            cancel  the workflow is canceled
--            pause   the workflow is paused; resume runs p_step_names again
--                    (from a resumable step's cursor, see resume_workflow)
--   p_inline (complete_and_continue, complete_steps): when the execution to
--            schedule is due now, no condition of the worker's has to run
--            before it (the definition has no cancel_if, the step no
--            skip_if), its step is in the same queue as the one that ended
--            (geneva._step_queue: a Go step and an HTTP step are run by
--            different workers) and the workflow's hero was not deleted while it
--            performed (hero_missing_at), it is inserted already
--            in_progress, without a job, and the workflow is left
--            performing it: the caller's worker runs it in the same job.
--   p_carry_keys, p_wait_keys (geneva._end_running, geneva.create_workflows;
--            NULL elsewhere; geneva._limit_next decides them): the slot of
--            a type's concurrency the ended execution held, to carry on: a
--            next step held to that limit only (geneva._limit_carries) may
--            start inline as above, holding the same slot (limit_keys;
--            else the caller frees it: see Returns); and the key to wait for: such a
--            next step due now waits for it at once (limit_wait_key),
--            without a job, as its claim would have left it.
--
-- A step that awaits an event (its definition's "await") waits for it after
-- its own wait: its execution is due at the await's timeout
-- (await_until), or when its wait ends if an event of that name is already
-- waiting for the workflow; geneva.send_event makes it due when the event
-- comes (one of its names, for an await of any of several: await_names;
-- with "since": "wait", only an event sent after the step was reached:
-- await_after, geneva._await_after). It is never started inline, nor is a step held to limits (its
-- claim checks them: geneva._limit_admit), but for one that takes over the
-- slot of the step before it (p_carry_keys). A move that runs the same step again
-- carries the event its execution consumed (event_id), and one that repeats
-- an execution that never started (housekeeping's recovery) awaits as it did.
--
-- An operator's pause or cancel of a performing workflow (requested_action)
-- takes effect here, at the step boundary, after the step's own result is
-- recorded: a cancel cancels the workflow, and the next execution, when
-- there would be one, is created and ended as geneva._signal_effects'
-- (operator, cancel) says, so the history shows what the cancel stopped (an
-- event of the type's cancel_on, cancel_by_event: as its (event, cancel)
-- row says, canceled_by_event; geneva._send_event); a
-- pause keeps the next execution scheduled, without a job (resume enqueues
-- it), and pauses, but lets a workflow with nothing left to run finish.
--
-- Inserting the next executions (what geneva._insert_execution and
-- geneva._enqueue_step do for one): the execution id is drawn first, so that the River job's
-- arguments name it and the row is written once with its job_id; a job due
-- within River's scheduler interval (5 seconds) is inserted available (with
-- its time), a later one scheduled; River hears of the jobs due now once per
-- queue (geneva._notify_insert). River runs on the real clock, the engine on
-- geneva.now(): a job is due after the same delay as its execution.
--
-- Plans: its callers (geneva._advance, geneva._end_running, start_steps)
-- hold every statement to index lookups by id, planned once per session,
-- with their settings (plan_cache_mode, enable_*), which it runs under: a
-- function's own settings cost a save and a restore at every call.
-- Returns the workflows whose next step started holding the slot carried to
-- it (p_carry_keys; NULL: none): the caller frees the others. Callers read
-- the rows they need.
-- (The moves are trusted: complete_steps and start_steps take them from
-- geneva._signal_effects, geneva._advance checks its own.)
create or replace function geneva._advance_many(
  p_workflow_ids bigint[],
  p_moves text[],
  p_step_names text[],
  p_waits interval[],
  p_from_ids bigint[],
  p_inline boolean[],
  p_carry_keys text[] default null,
  p_wait_keys text[] default null
)
returns bigint[]
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_carried bigint[];
  v_queues text[];
  v_queue text;
  v_stopped bigint[];
  v_stopped_by_event bigint[];
  v_execution geneva.step_executions;
begin
  perform pg_catalog.set_config('geneva.inserting', 'on', true);
  with item as (
    select o.ord, w.id as workflow_id, w.workflow_type, w.hero_type, w.hero_id, w.requested_action,
      w.hero_missing_at,
      -- (the workflow's start only for a definition with an offset from it:
      -- none, the common case, carries a NULL through the CTEs)
      case when d.step_afters is not null then w.created_at end as created_at, d.definition, d.step_names, d.step_waits, d.step_afters, d.step_await_timeouts, d.step_queues, d.queue as type_queue, d.priority,
      p_moves[o.ord] as move, p_step_names[o.ord] as step_name, coalesce(p_waits[o.ord], interval '0') as wait,
      coalesce(p_inline[o.ord], false) as inline,
      p_carry_keys[o.ord] as carry_key, p_wait_keys[o.ord] as wait_key,
      -- (the ended execution's own columns are read by awaited, below:
      -- read here, they would be carried through two materialized CTEs)
      p_from_ids[o.ord] as from_id,
      case when p_moves[o.ord] = 'first' then 0 else array_position(d.step_names, p_step_names[o.ord]) end as idx
    from unnest(p_workflow_ids) with ordinality as o (workflow_id, ord)
    join geneva.workflows w on w.id = o.workflow_id
    left join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  ),
  -- the moves that schedule, resolved against the current step list
  -- (resolved, stepped and timed are materialized: otherwise the planner
  -- folds each into the next, and every expression read from them, the next
  -- step's name above all, is copied into each expression that reads it, so
  -- that planned's projection held hundreds of copies and preparing it at
  -- every call cost a quarter of the whole batch's work; bench/NOTES.md)
  resolved as materialized (
    select i.*,
      case
        when i.move = 'next' and i.idx is null then 'pause'
        when i.move in ('next', 'skip', 'first') and (i.idx is null or i.idx >= cardinality(i.step_names)) then 'finish'
        when i.move in ('next', 'skip', 'first', 'same') then 'schedule'
        else i.move
      end as resolved
    from item i
  ),
  stepped as materialized (
    -- (as timed below: only the columns read after it)
    select r.workflow_id, r.workflow_type, r.hero_type, r.hero_id, r.requested_action, r.hero_missing_at,
      r.definition, r.step_names, r.step_await_timeouts, r.step_queues, r.type_queue, r.priority, r.move,
      r.step_name, r.inline, r.carry_key, r.wait_key, r.from_id, r.resolved,
      case when r.resolved = 'schedule' and r.move in ('next', 'skip', 'first') then r.step_names[r.idx + 1] else r.step_name end
        as next_step,
      case when r.resolved = 'schedule' and r.move in ('next', 'skip', 'first')
        then geneva._step_wait(r.step_waits[r.idx + 1], r.step_afters[r.idx + 1], r.created_at, v_now) else r.wait end
        as next_wait,
      -- (the next step's own "await", read once here: NULL for a step that
      -- awaits nothing, and for the same step again, whose await is carried)
      case when r.resolved = 'schedule' and r.move in ('next', 'skip', 'first') and r.step_await_timeouts[r.idx + 1] is not null
        then r.definition -> 'steps' -> r.idx -> 'await' end
        as next_await
    from resolved r
  ),
  -- the await of what is scheduled: the step's own (fresh, after its wait)
  -- or, for the same step again, the one it repeats (f: the execution it
  -- repeats, p_from_ids')
  awaited as (
    select s.*, a.await_event, a.await_from, a.await_until, a.await_names, a.await_after,
      case when s.move = 'same' then f.event_id end as next_event_id,
      case when s.move = 'same' then coalesce(f.attempt + 1, 1) else 1 end as next_attempt,
      case when f.metadata ? 'rewind' then null else f.cursor end as from_cursor
    from stepped s
    left join geneva.step_executions f on f.id = s.from_id
    left join lateral (
      select
        -- (the helpers read next_await, and the last two, which are not
        -- inlined, having a subquery, are called only for a step that
        -- awaits: an expression of this select is evaluated for every
        -- element, the condition below or not, and copied wherever the
        -- statements below read it)
        case when s.move = 'same' then case when f.started_at is null then f.await_event end else geneva._await_name(s.next_await) end as await_event,
        case when s.move = 'same' then f.await_from else v_now + s.next_wait end as await_from,
        case when s.move = 'same' then f.await_until
          else v_now + s.next_wait + s.step_await_timeouts[array_position(s.step_names, s.next_step)]
        end as await_until,
        case when s.move = 'same' then f.await_names
          when s.next_await is not null then geneva._await_names(s.next_await)
        end as await_names,
        case when s.move = 'same' then f.await_after
          when s.next_await is not null then geneva._await_after(s.workflow_id, s.next_await)
        end as await_after
      where s.resolved = 'schedule'
        and (s.move <> 'same' or f.started_at is null and f.await_event is not null)
        and (s.move = 'same' or s.next_await is not null)
    ) a on true
  ),
  -- when it is due, from now: after its wait, and for an await at its
  -- timeout unless its event is already here
  -- (only the columns read below: a materialized CTE stores every column
  -- it selects, the definition's arrays the later ones no longer need
  -- included)
  timed as materialized (
    select a.workflow_id, a.workflow_type, a.hero_type, a.hero_id, a.requested_action, a.hero_missing_at,
      a.definition, a.step_names, a.step_queues, a.type_queue, a.priority, a.move, a.step_name, a.inline,
      a.carry_key, a.wait_key, a.from_id, a.from_cursor, a.resolved, a.next_step, a.next_attempt,
      a.await_event, a.await_from, a.await_until, a.await_names, a.await_after, a.next_event_id,
      case when a.await_event is null then a.next_wait
        else greatest(
          a.next_wait,
          case when ev.waiting then a.await_from else a.await_until end - v_now
        )
      end as next_due
    from awaited a
    -- (a join, not a subquery in the expression: the expression is copied
    -- wherever next_due is read, and each copy would be a subplan)
    left join lateral (
      -- (a join is due when its wait ends, for its claim to decide:
      -- docs/children.md; the CASE: this select's expression is evaluated
      -- for every element, the condition below or not)
      select case when a.await_event is not null then a.await_event = 'geneva:children' or exists (
          select from geneva.events ev
          where ev.workflow_id = a.workflow_id and ev.name = any (coalesce(a.await_names, array[a.await_event]))
            and ev.consumed_by is null and ev.id > coalesce(a.await_after, 0)
        ) end as waiting
      where a.await_event is not null
    ) ev on true
  ),
  -- an operator's request waits for the step boundary, which is now
  requested as (
    select r.*,
      case
        when r.requested_action in ('cancel', 'cancel_by_event') and r.resolved = 'schedule' then 'schedule_canceled'
        when r.requested_action in ('cancel', 'cancel_by_event') and r.resolved in ('pause', 'finish') then 'cancel'
        when r.requested_action = 'pause' and r.resolved = 'schedule' then 'schedule_paused'
        else r.resolved
      end as final
    from timed r
  ),
  -- (only the columns the statements below read: the rows are written to
  -- and read from a tuplestore three times)
  planned as materialized (
    select q.workflow_id, q.workflow_type, q.hero_type, q.hero_id, q.priority, q.final, q.move, q.next_step,
      q.next_attempt, q.next_due, q.from_cursor, q.from_id, q.await_event, q.await_from, q.await_until,
      q.await_names, q.await_after, q.next_event_id, q.carry_key, q.wait_key, q.requested_action,
      q.carry_key is not null and geneva._limited(q.definition, q.step_names, q.next_step) as carries,
      -- a step no longer in the definition is not started here: start_step
      -- records it (step_not_defined) when its job runs
      coalesce(
        q.inline and q.final = 'schedule' and q.next_due <= interval '0'
          and q.await_event is null
          and (not geneva._limited(q.definition, q.step_names, q.next_step)
            or q.carry_key is not null and geneva._limit_carries(q.definition, q.step_names, q.next_step))
          and q.hero_missing_at is null
          -- (the worker that ran a step runs the next one only from its own
          -- queue: a Go step's successor over HTTP is the HTTP runner's)
          and geneva._step_queue(q.step_names, q.step_queues, q.type_queue, q.next_step)
            = geneva._step_queue(q.step_names, q.step_queues, q.type_queue, q.step_name)
          and geneva._unconditional(q.definition, q.step_names, q.next_step),
        false
      ) as start,
      geneva._step_queue(q.step_names, q.step_queues, q.type_queue, q.next_step) as queue,
      -- (a next step due now that waits for a full key has no job; with a
      -- wait key, the caller passes no carry key, so it does not start)
      coalesce(
        q.wait_key is not null and q.final = 'schedule' and q.next_due <= interval '0'
          and q.await_event is null
          and array_position(q.step_names, q.next_step) is not null
          and geneva._limit_carries(q.definition, q.step_names, q.next_step),
        false
      ) as waits,
      case when q.final like 'schedule%' then geneva._execution_id(q.workflow_id) end as next_id
    from requested q
  ),
  jobs as (
    insert into public.river_job (
      args, kind, max_attempts, priority, queue, scheduled_at, state, metadata, tags
    )
    select
      geneva._step_job_args(p.next_id, p.workflow_id, p.workflow_type, p.hero_type, p.hero_id, p.next_step),
      'geneva_step',
      25,
      p.priority,
      p.queue,
      now() + greatest(p.next_due, interval '0'),
      case when geneva._step_job_available(p.next_due) then 'available' else 'scheduled' end::public.river_job_state,
      '{}',
      '{}'
    from planned p
    where p.final = 'schedule' and not p.start and not p.waits
    order by p.next_id
    returning river_job.id, (river_job.args ->> 'execution_id')::bigint as execution_id
  ),
  executions as (
    insert into geneva.step_executions (
      id, workflow_id, step_name, attempt, state, scheduled_for, started_at, job_id, cursor,
      continues_from_id, await_event, await_from, await_until, await_names, await_after, event_id, limit_keys,
      limit_wait_key, created_at, updated_at
    )
    select p.next_id, p.workflow_id, p.next_step, p.next_attempt,
      case when p.start then 'in_progress' else 'scheduled' end, v_now + p.next_due,
      case when p.start then v_now end, j.id,
      case when p.move = 'same' then p.from_cursor end,
      case when p.move = 'same' and p.from_cursor is not null then p.from_id end,
      p.await_event, p.await_from, p.await_until, p.await_names, p.await_after, p.next_event_id,
      case
        when p.start and p.carries then array[p.carry_key]
      end,
      case when p.waits then p.wait_key end,
      v_now, v_now
    from planned p
    left join jobs j on j.execution_id = p.next_id
    where p.next_id is not null
    order by p.next_id
  ),
  moved as (
    update geneva.workflows w
    set state = case
        when p.start then 'performing'
        when p.final = 'schedule' then 'ready'
        when p.final = 'finish' then 'finished'
        when p.final in ('cancel', 'schedule_canceled') then 'canceled'
        else 'paused'
      end,
      current_step_name = case when p.start then p.next_step end,
      next_step_name = case p.final
        when 'finish' then null
        when 'cancel' then w.next_step_name
        else p.next_step
      end,
      requested_action = null,
      transitioned_at = case when p.start or p.final = 'schedule' then null else v_now end,
      paused_at = case when p.final in ('pause', 'schedule_paused') then v_now end,
      finished_at = case when p.final = 'finish' then v_now else w.finished_at end,
      canceled_at = case when p.final in ('cancel', 'schedule_canceled') then v_now else w.canceled_at end,
      updated_at = v_now
    from planned p
    where w.id = p.workflow_id
      and p.move <> 'first'
  )
  select coalesce(array_agg(distinct p.queue) filter (
      where p.final = 'schedule' and not p.start and not p.waits and p.next_due <= interval '0'
    ), '{}'),
    coalesce(array_agg(p.next_id) filter (where p.final = 'schedule_canceled'), '{}'),
    coalesce(array_agg(p.next_id) filter (where p.final = 'schedule_canceled' and p.requested_action = 'cancel_by_event'), '{}'),
    array_agg(p.workflow_id) filter (where p.start and p.carries)
  into v_queues, v_stopped, v_stopped_by_event, v_carried
  from planned p;
  perform pg_catalog.set_config('geneva.inserting', '', true);

  -- the next executions an operator's cancel, or an event of the type's
  -- cancel_on, stopped
  if cardinality(v_stopped) > 0 then
    for v_execution in
      select e.* from geneva.step_executions e where e.id = any (v_stopped) order by e.id
    loop
      perform geneva._end_as(
        v_execution, case when v_execution.id = any (v_stopped_by_event) then 'event' else 'operator' end, 'cancel'
      );
    end loop;
  end if;

  -- River hears of the jobs due now, once per queue
  foreach v_queue in array v_queues loop
    perform geneva._notify_insert(v_queue);
  end loop;
  return v_carried;
end;
$$;
