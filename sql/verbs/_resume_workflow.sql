-- geneva._resume_workflow: the one implementation of geneva.resume_workflow (see there: what
-- it does, what it locks and raises), which records its action
-- (geneva._log_action) with p_bulk_action_id: the id of the
-- geneva.bulk_workflows call it is part of, or NULL. A parameter, not a
-- setting: a caller cannot name a bulk call it did not make.
--
-- Called by: geneva.resume_workflow (NULL), geneva.bulk_workflows (its own row's id).
-- Raises: as geneva.resume_workflow.
create or replace function geneva._resume_workflow(p_workflow_id bigint, p_bulk_action_id bigint)
returns geneva.workflows
language plpgsql
volatile
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
    perform geneva._log_action(
      'resume_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow),
      p_bulk_action_id => p_bulk_action_id
    );
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
      perform geneva._log_action(
        'resume_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow),
        p_bulk_action_id => p_bulk_action_id
      );
      return v_workflow;
    end if;
    -- a resumable step continues from the cursor its latest execution had
    select e.* into v_last
    from geneva.step_executions e
    where e.workflow_id = p_workflow_id
      and e.step_name = v_workflow.next_step_name
    order by e.id desc
    limit 1;
    perform geneva._insert_execution(
      v_workflow, v_definition, v_workflow.next_step_name, v_now, true,
      geneva._next_attempt(p_workflow_id, v_workflow.next_step_name),
      v_last.cursor,
      case when v_last.cursor is not null then v_last.id end,
      p_await => true,
      p_event_id => v_last.event_id,
      p_await_after => v_last.await_after
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

  perform geneva._log_action(
    'resume_workflow', p_workflow_id, '{}', geneva._action_result(v_workflow),
    p_bulk_action_id => p_bulk_action_id
  );
  return v_workflow;
end;
$$;
