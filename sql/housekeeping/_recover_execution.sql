-- geneva._recover_execution: recovers one execution that is stuck: in_progress
-- without a sign of life (its start, last checkpoint or heartbeat, updated_at)
-- since p_in_progress_before (its worker died), or scheduled for before
-- p_scheduled_before while its workflow is ready (its job was lost, or the
-- queue is that far behind).
--
-- Called by: geneva.housekeep, once per candidate found by its queries.
-- Locks: the workflow row, then the execution row, then the locks of the
-- limit keys it holds slots of (geneva.limit_keys), skipping any that
-- another transaction holds (housekeeping never waits on live traffic; the
-- next round tries again). Everything is checked again under the locks, and
-- nothing is done when the execution is no longer stuck (a paused
-- workflow's kept execution is never recovered).
--
-- A scheduled execution whose job still waits (available, scheduled -- a
-- worker snoozing it, say while a deploy lacks the step -- or retryable) is
-- not lost, only late: it is recovered in place, whatever p_action: its
-- scheduled_for becomes now, so that it is left alone until that new due time
-- passes the threshold again, and its metadata counts the recovery
-- (queue_lag_recoveries) and keeps the first due time (first_scheduled_for).
-- No row is added, no attempt counted, the job keeps its place.
--
-- Otherwise, p_action 'reattempt': the execution ends completed/recovered and
-- the same step is scheduled now (continuing a resumable step's cursor).
-- p_action 'cancel': it ends canceled/recovered and the workflow is canceled.
-- metadata.recovery_reason says which kind of stuck it was. Returns whether it
-- recovered the execution.
create or replace function geneva._recover_execution(
  p_execution_id bigint,
  p_action text,
  p_in_progress_before timestamptz,
  p_scheduled_before timestamptz
)
returns boolean
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow_id bigint;
  v_workflow geneva.workflows;
  v_execution geneva.step_executions;
  v_reason text;
  v_effect record;
begin
  select e.workflow_id into v_workflow_id from geneva.step_executions e where e.id = p_execution_id;
  select w.* into v_workflow from geneva.workflows w where w.id = v_workflow_id for no key update skip locked;
  if v_workflow.id is null then
    return false;
  end if;
  select e.* into v_execution from geneva.step_executions e where e.id = p_execution_id for no key update skip locked;
  -- the rows of the slots it holds, then their keys' locks (as its end's
  -- free takes them: geneva._limit_release, which takes them again at no
  -- cost), not waited for either
  if v_execution.limit_keys is not null and (
    (
      select count(*)
      from (
        select from geneva.limit_slots s
        where s.limit_key = any (v_execution.limit_keys) and s.workflow_id = v_execution.workflow_id
        order by s.limit_key, s.slot
        for no key update skip locked
      ) l
    ) < (
      select count(*) from geneva.limit_slots s
      where s.limit_key = any (v_execution.limit_keys) and s.workflow_id = v_execution.workflow_id
    )
    or (
      select count(*)
      from (
        select from geneva.limit_keys k
        where k.limit_key = any (v_execution.limit_keys)
        order by k.limit_key
        for update skip locked
      ) l
    ) < (select count(distinct k) from unnest(v_execution.limit_keys) k)
  ) then
    return false;
  end if;

  if v_execution.state = 'in_progress' and v_execution.updated_at < p_in_progress_before then
    v_reason := 'stuck_in_progress';
  elsif v_execution.state = 'scheduled' and v_execution.scheduled_for < p_scheduled_before
    and v_execution.limit_wait_key is null and v_workflow.state = 'ready' then
    v_reason := 'stuck_scheduled';
    -- a job still waiting: late, not lost; recovered in place
    if exists (
      select from public.river_job j
      where j.id = v_execution.job_id
        and geneva._job_waits(j.state::text)
    ) then
      update geneva.step_executions e
      set scheduled_for = geneva.now(),
        metadata = e.metadata || jsonb_build_object(
          'queue_lag_recoveries', coalesce((e.metadata ->> 'queue_lag_recoveries')::integer, 0) + 1,
          'first_scheduled_for', coalesce(e.metadata -> 'first_scheduled_for', to_jsonb(e.scheduled_for))
        ),
        updated_at = geneva.now()
      where e.id = v_execution.id;
      return true;
    end if;
  else
    return false;
  end if;

  select e.* into strict v_effect
  from geneva._signal_effects() e
  where e.cause = 'housekeeping' and e.signal = p_action;
  perform geneva._end_execution(
    v_execution, v_effect.execution_state, v_effect.outcome,
    p_metadata => jsonb_build_object('recovery_reason', v_reason)
  );
  perform geneva._advance(
    v_workflow, geneva._definition(v_workflow.workflow_type), v_effect.workflow_move, v_execution.step_name,
    p_from => v_execution
  );
  return true;
end;
$$;
