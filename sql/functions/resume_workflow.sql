-- geneva.resume_workflow: an operator resumes a paused workflow.
--
-- Called by: operators and applications (any SQL client, goclient, the CLI).
-- The workflow becomes ready. The execution it kept while paused runs at its
-- time (at once when overdue), with a new River job unless one is still
-- waiting; without a kept execution (the workflow paused on an error, a pause
-- signal or a missing step), next_step_name is scheduled anew, now, as one
-- more attempt of it, continuing the cursor of a resumable step's latest
-- execution (an error that paused a long iteration does not start it over).
-- A step that awaits an event runs with the event its latest execution
-- consumed; when that one had none (a pause on its timeout,
-- paused_by_timeout), it waits for its event again, with a fresh timeout.
--
-- On a performing workflow with a pause requested (it is not paused yet: it
-- would pause when its step ends), resume withdraws the request: the
-- workflow stays performing with requested_action NULL, and its step's end
-- moves it on as if no pause had been asked for.
--
-- Locks: the workflow row, then its active execution. Records the action
-- (geneva._log_action).
-- Returns the workflow row after the call.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- workflow that is neither paused nor performing with a pause requested
-- (ready, finished, canceled; performing without a request or with a cancel
-- requested).
create or replace function geneva.resume_workflow(p_workflow_id bigint)
returns geneva.workflows
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_workflow geneva.workflows := geneva._lock_workflow(p_workflow_id);
  v_execution geneva.step_executions;
  v_definition geneva.workflow_definitions;
  v_last geneva.step_executions;
begin
  -- guard: a requested pause not applied yet is withdrawn
  if v_workflow.state = 'performing' and v_workflow.requested_action = 'pause' then
    update geneva.workflows w
    set requested_action = null,
      updated_at = v_now
    where w.id = p_workflow_id
    returning w.* into v_workflow;
    perform geneva._log_action('resume_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow));
    return v_workflow;
  end if;

  if v_workflow.state <> 'paused' then
    raise exception 'workflow % cannot be resumed', p_workflow_id
      using errcode = '55000',
            detail = format('Workflow is %s%s.', v_workflow.state,
              case when v_workflow.requested_action is not null
                then format(', with a %s requested', v_workflow.requested_action) else '' end),
            hint = 'Only paused workflows can be resumed, and performing ones with a pause requested.',
            table = 'workflows';
  end if;

  v_execution := geneva._lock_active_execution(p_workflow_id);

  if v_execution.state = 'scheduled' then
    perform geneva._ensure_job(v_workflow, v_execution);
  elsif v_execution.id is null then
    v_definition := geneva._definition(v_workflow.workflow_type);

    -- (a paused workflow always has a next step; else start from the first)
    v_workflow.next_step_name := coalesce(v_workflow.next_step_name, v_definition.step_names[1]);
    if v_workflow.next_step_name is null then
      v_workflow := geneva._advance(v_workflow, v_definition, 'finish', null);
      perform geneva._log_action('resume_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow));
      return v_workflow;
    end if;
    -- a resumable step continues from the cursor its latest execution had
    select e.* into v_last
    from geneva.step_executions e
    where e.workflow_id = p_workflow_id
      and e.step_name = v_workflow.next_step_name
    order by e.id desc
    limit 1;
    perform geneva._schedule_step(
      v_workflow, v_definition, v_workflow.next_step_name, v_now, true,
      geneva._next_attempt(p_workflow_id, v_workflow.next_step_name),
      v_last.cursor,
      case when v_last.cursor is not null then v_last.id end,
      p_await => true,
      p_event_id => v_last.event_id
    );
  end if;

  update geneva.workflows w
  set state = 'ready',
    next_step_name = v_workflow.next_step_name,
    paused_at = null,
    transitioned_at = null,
    updated_at = v_now
  where w.id = p_workflow_id
  returning w.* into v_workflow;

  perform geneva._log_action('resume_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow));
  return v_workflow;
end;
$$;

comment on function geneva.resume_workflow(bigint) is
'Resumes a paused workflow: its kept execution runs (at once if overdue), or its next step is scheduled now; withdraws a pause requested of a performing one.';
