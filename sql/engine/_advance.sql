-- geneva._advance: moves one workflow on after an execution has ended:
-- geneva._advance_many, which documents the moves, for a batch of one. One
-- statement for the workflow and what it schedules.
--
-- Called by: fail_step, cancel_workflow, skip_step,
-- resume_workflow, housekeeping (geneva._recover_execution,
-- geneva._repair_orphan), the hero trigger. The caller holds the workflow
-- lock (and the execution lock), and has already ended the execution that
-- brought the workflow here (p_from, when there is one). p_workflow and
-- p_definition name the workflow and its type; what is moved is the
-- workflow's row as it is now.
-- Returns the workflow's row after the move.
-- Raises: 22023 for an unknown move.
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
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
as $$
declare
  v_workflow geneva.workflows;
begin
  if p_move is null or p_move not in ('next', 'skip', 'same', 'finish', 'cancel', 'pause') then
    raise exception 'unknown move %', coalesce(p_move, 'NULL') using errcode = '22023';
  end if;
  perform geneva._advance_many(
    array[p_workflow.id], array[p_move], array[p_step_name], array[p_wait], array[p_from.id], array[p_inline]
  );
  select w.* into v_workflow from geneva.workflows w where w.id = p_workflow.id;
  return v_workflow;
end;
$$;
