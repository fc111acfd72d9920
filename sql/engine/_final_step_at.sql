-- geneva._final_step_at: the earliest instant the last step of a workflow's
-- current definition can start (the talk's time remaining until the final
-- step), read by geneva.workflow_list's final_step_at.
--
-- Called by: geneva.final_step_at (and so geneva.workflow_list). Reads the workflow's active execution
-- (step_executions_one_active) and its type's current definition; takes no
-- locks.
--
-- From the active execution: a scheduled one is due at its scheduled_for
-- (an await's at its await_from, the earliest its event can come), no
-- earlier than now; an in_progress one ends no earlier than now. A paused
-- workflow without one (paused by an error or a timeout) runs its
-- next_step_name again when resumed: now at the earliest. Each later step of
-- the current step list then starts as geneva._advance_many schedules it:
-- the later of the step before it plus its wait and the workflow's
-- created_at plus its "after". Steps take no time, events come the moment
-- they are awaited, no limit holds a step back and nothing fails: the
-- result is exact when offsets decide, a lower bound otherwise.
--
-- NULL for a finished or canceled workflow, a performing one an operator
-- asked to cancel, and one whose step (or type) is no longer defined. The
-- last step running now: when it started.
create or replace function geneva._final_step_at(p_workflow geneva.workflows)
returns timestamptz
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_definition geneva.workflow_definitions;
  v_execution geneva.step_executions;
  v_index integer;
  v_at timestamptz;
begin
  if p_workflow.state not in ('ready', 'performing', 'paused') or p_workflow.requested_action in ('cancel', 'cancel_by_event') then
    return null;
  end if;
  select d.* into v_definition from geneva.workflow_definitions d where d.workflow_type = p_workflow.workflow_type;
  if not found then
    return null;
  end if;

  select e.* into v_execution
  from geneva.step_executions e
  where e.workflow_id = p_workflow.id and e.state in ('scheduled', 'in_progress');
  if not found then
    v_index := array_position(v_definition.step_names, p_workflow.next_step_name);
    v_at := v_now;
  else
    v_index := array_position(v_definition.step_names, v_execution.step_name);
    if v_execution.state = 'in_progress' then
      if v_index = cardinality(v_definition.step_names) then
        return v_execution.started_at;
      end if;
      v_at := v_now;
    else
      v_at := greatest(least(v_execution.scheduled_for, v_execution.await_from), v_now);
    end if;
  end if;
  if v_index is null then
    return null;
  end if;

  for v_step in v_index + 1 .. cardinality(v_definition.step_names) loop
    v_at := v_at + geneva._step_wait(v_definition.step_waits[v_step], v_definition.step_afters[v_step], p_workflow.created_at, v_at);
  end loop;
  return v_at;
end;
$$;
