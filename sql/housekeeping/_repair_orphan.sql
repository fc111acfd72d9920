-- geneva._repair_orphan: repairs one workflow whose state has no matching
-- active execution (the shapes of geneva.orphan_workflows), the way its state
-- says:
--   ready or performing: a mismatched active execution (an in_progress one of
--     a ready workflow, a scheduled one of a performing workflow) ends
--     canceled/recovered; then the step the workflow was at (performing: the
--     current step; ready: the next step) is scheduled now, counting one more
--     attempt of it, and the workflow is ready (an operator's pending request
--     applies, see geneva._advance); a step no longer defined pauses the
--     workflow instead
--   finished or canceled: the active execution ends canceled/recovered (its
--     waiting job is canceled); the workflow stays as it is
-- The ended execution's metadata.recovery_reason and the new execution's
-- metadata.repaired name the shape ('orphan_' || shape for the first).
--
-- Called by: geneva.housekeep, once per row of geneva.orphan_workflows.
-- Locks: the workflow row, then its active execution, skipping the workflow
-- when another transaction holds it (the next round tries again); the shape
-- is checked again under the lock. Returns whether it repaired the workflow.
create or replace function geneva._repair_orphan(p_workflow_id bigint)
returns boolean
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow geneva.workflows;
  v_definition geneva.workflow_definitions;
  v_active geneva.step_executions;
  v_from geneva.step_executions;
  v_shape text;
  v_step_name text;
begin
  select w.* into v_workflow from geneva.workflows w where w.id = p_workflow_id for no key update skip locked;
  if v_workflow.id is null then
    return false;
  end if;
  select e.* into v_active
  from geneva.step_executions e
  where e.workflow_id = v_workflow.id and e.state in ('scheduled', 'in_progress')
  for no key update;

  v_shape := case
    when v_workflow.state = 'ready' and v_active.state is distinct from 'scheduled' then 'ready_without_scheduled'
    when v_workflow.state = 'performing' and v_active.state is distinct from 'in_progress' then 'performing_without_running'
    when v_workflow.state in ('finished', 'canceled') and v_active.id is not null then 'ended_with_active'
  end;
  if v_shape is null then
    return false;
  end if;

  if v_active.id is not null then
    perform geneva._end_as(
      v_active, 'repair', 'orphan', jsonb_build_object('recovery_reason', 'orphan_' || v_shape)
    );
  end if;
  if v_shape = 'ended_with_active' then
    return true;
  end if;

  v_definition := geneva._definition(v_workflow.workflow_type);
  v_step_name := case
    when v_workflow.state = 'performing' then coalesce(v_workflow.current_step_name, v_workflow.next_step_name)
    else v_workflow.next_step_name
  end;
  select e.* into v_from
  from geneva.step_executions e
  where e.workflow_id = v_workflow.id and e.step_name = v_step_name
  order by e.id desc
  limit 1;

  if v_step_name is null or array_position(v_definition.step_names, v_step_name) is null then
    perform geneva._advance(v_workflow, v_definition, 'pause', v_step_name);
    return true;
  end if;

  perform geneva._advance(v_workflow, v_definition, 'same', v_step_name, p_from => v_from);
  update geneva.step_executions e
  set metadata = e.metadata || jsonb_build_object('repaired', v_shape)
  where e.workflow_id = v_workflow.id and e.state in ('scheduled', 'in_progress');
  return true;
end;
$$;
