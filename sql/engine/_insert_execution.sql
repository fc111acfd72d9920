-- geneva._insert_execution: inserts one scheduled execution of a step and,
-- unless told not to, the River job that will trigger it: the one row-wise
-- insert of a next execution (geneva._advance_many is the set-wise one).
--
-- Called by: geneva.create_workflows (a batch of one), geneva.resume_workflow,
-- geneva.schedule_step (run now, or at a time), geneva._retry_workflow
-- (geneva._advance_many inserts set-wise, with the same job arguments:
-- geneva._step_job_args). The caller holds the workflow
-- lock, has ended any other active execution (the unique index
-- step_executions_one_active enforces it), and updates the workflow row
-- itself (state, next_step_name).
--
-- p_attempt counts the executions of the step (1 when it is reached from its
-- predecessor); a successor execution of a resumable step gets the cursor and
-- the id of the execution it continues.
--
-- p_await: the step awaits its event when its definition says so ("await"):
-- the wait for the event begins at p_scheduled_for (after the step's own
-- wait), and the execution is due at its timeout, or at p_scheduled_for when
-- an event of that name is already waiting for the workflow (sent before the
-- wait began). Without p_await (an operator's schedule_step runs the step
-- without its event) or with p_event_id (a resume carries the event the
-- step's last execution consumed), it is due at p_scheduled_for. An await
-- "since": "wait" ignores the events the workflow had as the step was
-- reached (geneva._await_after, now; p_await_after: a resume carries the
-- one its step's last execution had, so that an event sent while the
-- workflow was paused counts).
--
-- A step held to its type's concurrency only, due now and awaiting no event,
-- whose key is full and has executions waiting for a slot already, waits
-- behind them at once (geneva._limit_wait_behind says when, and why): it is
-- inserted waiting for the key (limit_wait_key), without a job, as its claim
-- would have left it.
--
-- The execution id is drawn first so that the job's arguments can name it and
-- the execution row is written once, with its job_id.
create or replace function geneva._insert_execution(
  p_workflow geneva.workflows,
  p_definition geneva.workflow_definitions,
  p_step_name text,
  p_scheduled_for timestamptz,
  p_enqueue boolean,
  p_attempt integer default 1,
  p_cursor jsonb default null,
  p_continues_from_id bigint default null,
  p_await boolean default false,
  p_event_id bigint default null,
  p_await_after bigint default null
)
returns bigint
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_execution_id bigint := geneva._execution_id(p_workflow.id);
  v_job_id bigint;
  v_index integer := array_position(p_definition.step_names, p_step_name);
  v_timeout interval := p_definition.step_await_timeouts[v_index];
  v_await_event text;
  v_await_names text[];
  v_await_after bigint;
  v_await_until timestamptz;
  v_scheduled_for timestamptz := p_scheduled_for;
  v_wait_key text;
begin
  if p_await and p_event_id is null and v_timeout is not null then
    v_await_event := geneva._await_name(p_definition.definition -> 'steps' -> (v_index - 1) -> 'await');
    v_await_names := geneva._await_names(p_definition.definition -> 'steps' -> (v_index - 1) -> 'await');
    if p_definition.definition -> 'steps' -> (v_index - 1) -> 'await' ->> 'since' = 'wait' then
      v_await_after := coalesce(
        p_await_after, geneva._await_after(p_workflow.id, p_definition.definition -> 'steps' -> (v_index - 1) -> 'await')
      );
    end if;
    v_await_until := p_scheduled_for + v_timeout;
    -- (a join is due when its wait ends, for its claim to decide: docs/children.md)
    if v_await_event <> 'geneva:children' and not exists (
      select from geneva.events ev
      where ev.workflow_id = p_workflow.id and ev.name = any (coalesce(v_await_names, array[v_await_event]))
        and ev.consumed_by is null and ev.id > coalesce(v_await_after, 0)
    ) then
      v_scheduled_for := v_await_until;
    end if;
  end if;

  -- behind the key's waiters, when it has some (see above)
  if p_enqueue and v_await_event is null and v_scheduled_for <= v_now and v_index is not null
    and geneva._limit_carries(p_definition.definition, p_definition.step_names, p_step_name) then
    v_wait_key := (geneva._limit_wait_behind(array[geneva._concurrency_key(
      p_definition.definition, p_workflow.workflow_type, p_workflow.group_name, p_workflow.hero_type,
      p_workflow.hero_id, p_workflow.parent_id
    )]))[1];
  end if;

  if p_enqueue and v_wait_key is null then
    v_job_id := geneva._enqueue_step(
      v_execution_id,
      p_workflow,
      p_step_name,
      v_scheduled_for,
      geneva._step_queue(p_definition.step_names, p_definition.step_queues, p_definition.queue, p_step_name),
      p_definition.priority
    );
  end if;

  -- the only inserter of active executions (sql/guards/step_executions_guard_columns.sql)
  perform pg_catalog.set_config('geneva.inserting', 'on', true);
  insert into geneva.step_executions (
    id, workflow_id, step_name, attempt, state, scheduled_for, started_at, job_id, cursor,
    continues_from_id, await_event, await_from, await_until, await_names, await_after, event_id, limit_wait_key,
    created_at, updated_at
  ) values (
    v_execution_id, p_workflow.id, p_step_name, p_attempt,
    'scheduled', v_scheduled_for, null, v_job_id, p_cursor, p_continues_from_id,
    v_await_event, case when v_await_event is not null then p_scheduled_for end, v_await_until, v_await_names,
    v_await_after, p_event_id,
    v_wait_key, v_now, v_now
  );
  perform pg_catalog.set_config('geneva.inserting', '', true);

  return v_execution_id;
end;
$$;
