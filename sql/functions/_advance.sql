-- geneva._advance: moves a workflow on after an execution has ended: schedules
-- what runs next, or finishes, cancels or pauses the workflow. One UPDATE of
-- the workflow row.
--
-- Called by: start_step, complete_step, fail_step, interrupt_step,
-- cancel_workflow, skip_step, housekeeping, the hero trigger. The caller holds
-- the workflow lock (and the execution lock), and has already ended the
-- execution that brought the workflow here (p_from, when there is one).
--
-- p_move:
--   next    the step after p_step_name in the current step list, after that
--           step's own wait; finish when p_step_name is the last step; pause
--           when p_step_name is no longer defined (a deploy removed it while
--           it ran: the workflow stops rather than skip what remains)
--   skip    as next, but finish when p_step_name is no longer defined (an
--           operator's skip of a step that is gone)
--   same    p_step_name again, at now + p_wait (reattempts, recovery, a
--           resumable step's hand-over): the new execution counts one more
--           attempt and continues p_from's cursor
--   finish  the workflow is finished
--   cancel  the workflow is canceled
--   pause   the workflow is paused; resume runs p_step_name again (from a
--           resumable step's cursor, see resume_workflow)
--
-- An operator's pause or cancel of a performing workflow (requested_action)
-- takes effect here, at the step boundary, after the step's own result is
-- recorded: a cancel cancels the workflow, and the next execution, when there
-- would be one, is created canceled (canceled_externally), so the history
-- shows what the cancel stopped; a pause keeps the next execution scheduled,
-- without a job (resume enqueues it), and pauses, but lets a workflow with
-- nothing left to run finish.
--
-- p_inline (geneva.complete_and_continue): when the execution to schedule is
-- due now and no condition of the worker's has to run before it (the
-- definition has no cancel_if, the step no skip_if), it is inserted already
-- in_progress, without a job, and the workflow is left performing it: the
-- caller's worker runs it in the same job. Not when the workflow's hero was
-- deleted while it performed (hero_missing_at): start_step ends that
-- execution canceled_hero_missing when its job runs.
create or replace function geneva._advance(
  p_workflow geneva.workflows,
  p_definition geneva.workflow_definitions,
  p_move text,
  p_step_name text,
  p_wait interval default null,
  p_from geneva.step_executions default null,
  p_inline boolean default false
)
returns geneva.workflows
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_move text := p_move;
  v_step_name text := p_step_name;
  v_wait interval := coalesce(p_wait, interval '0');
  v_attempt integer := 1;
  v_index integer;
  v_state text;
  v_workflow geneva.workflows;
  v_start boolean := false;
  v_next_id bigint;
  v_next geneva.step_executions;
begin
  -- guard: resolve the moves that schedule against the current step list
  if v_move in ('next', 'skip') then
    v_index := array_position(p_definition.step_names, p_step_name);
    if v_index is null and v_move = 'next' then
      v_move := 'pause';
    elsif v_index is null or v_index >= cardinality(p_definition.step_names) then
      v_move := 'finish';
    else
      v_move := 'schedule';
      v_step_name := p_definition.step_names[v_index + 1];
      v_wait := p_definition.step_waits[v_index + 1];
    end if;
  elsif v_move = 'same' then
    v_move := 'schedule';
    v_attempt := coalesce(p_from.attempt + 1, 1);
  elsif v_move not in ('finish', 'cancel', 'pause') then
    raise exception 'unknown move %', p_move using errcode = '22023';
  end if;

  -- guard: an operator's request waits for the step boundary, which is now
  if p_workflow.requested_action = 'cancel' and v_move = 'schedule' then
    v_move := 'schedule_canceled';
  elsif p_workflow.requested_action = 'cancel' and v_move in ('pause', 'finish') then
    v_move := 'cancel';
  elsif p_workflow.requested_action = 'pause' and v_move = 'schedule' then
    v_move := 'schedule_paused';
  end if;

  -- a step no longer in the definition is not started here: start_step
  -- records it (step_not_defined) when its job runs
  v_start := coalesce(
    p_inline and v_move = 'schedule' and v_wait <= interval '0'
      and p_workflow.hero_missing_at is null
      and coalesce(p_definition.definition -> 'cancel_if', '[]') = '[]'
      and array_position(p_definition.step_names, v_step_name) is not null
      and not (
        p_definition.definition -> 'steps' -> (array_position(p_definition.step_names, v_step_name) - 1) ? 'skip_if'
      ),
    false
  );

  if v_move in ('schedule', 'schedule_paused', 'schedule_canceled') then
    v_next_id := geneva._schedule_step(
      p_workflow, p_definition, v_step_name, v_now + v_wait, v_move = 'schedule', v_attempt,
      case when p_move = 'same' then p_from.cursor end,
      case when p_move = 'same' and p_from.cursor is not null then p_from.id end,
      v_start
    );
  end if;
  if v_move = 'schedule_canceled' then
    select e.* into v_next from geneva.step_executions e where e.id = v_next_id;
    perform geneva._end_as(v_next, 'operator', 'cancel');
  end if;

  v_state := case
    when v_start then 'performing'
    when v_move = 'schedule' then 'ready'
    when v_move = 'finish' then 'finished'
    when v_move in ('cancel', 'schedule_canceled') then 'canceled'
    else 'paused'
  end;

  update geneva.workflows w
  set state = v_state,
    current_step_name = case when v_start then v_step_name end,
    next_step_name = case v_move
      when 'finish' then null
      when 'cancel' then w.next_step_name
      else v_step_name
    end,
    requested_action = null,
    transitioned_at = case when v_state in ('ready', 'performing') then null else v_now end,
    paused_at = case when v_state = 'paused' then v_now end,
    finished_at = case when v_state = 'finished' then v_now else w.finished_at end,
    canceled_at = case when v_state = 'canceled' then v_now else w.canceled_at end,
    updated_at = v_now
  where w.id = p_workflow.id
  returning w.* into v_workflow;

  return v_workflow;
end;
$$;
