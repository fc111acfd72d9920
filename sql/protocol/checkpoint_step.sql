-- geneva.checkpoint_step: a resumable step saves its cursor and learns whether
-- to stop.
--
-- Called by: the worker on behalf of a resumable step, between units of work.
-- One UPDATE of the execution; the workflow row is read, not locked.
-- Returns true when the step should stop now: an operator requested a pause or
-- cancel of the workflow, or the execution is no longer in_progress (the cursor
-- is then not saved). The step then returns, and its result (e.g. suspend)
-- applies the request at the step boundary.
-- A NULL cursor saves nothing and only asks (a step that has no cursor yet
-- learns of an operator's request at its first checkpoint too): a saved
-- cursor is never erased by a checkpoint (a step that must start over
-- returns a rewinding reattempt instead).
-- A cursor nested over 64 levels deep is refused (geneva._check_json_depth):
-- the worker could not decode it for the next execution.
-- Raises: 22004 for a NULL id; 22023 for a cursor nested over 64 levels
-- deep; P0002 for an unknown execution.
create or replace function geneva.checkpoint_step(p_execution_id bigint, p_cursor jsonb)
returns boolean
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow_id bigint;
begin
  if p_execution_id is null then
    raise exception 'execution id must not be null' using errcode = '22004';
  end if;
  perform geneva._check_json_depth(p_cursor, 'cursor');
  update geneva.step_executions e
  set cursor = coalesce(p_cursor, e.cursor),
    updated_at = geneva.now()
  where e.id = p_execution_id
    and e.state = 'in_progress'
  returning e.workflow_id into v_workflow_id;

  if not found then
    if not exists (select 1 from geneva.step_executions e where e.id = p_execution_id) then
      raise exception 'step execution % not found', p_execution_id
        using errcode = 'P0002',
              table = 'step_executions';
    end if;
    return true;
  end if;

  return exists (
    select 1
    from geneva.workflows w
    where w.id = v_workflow_id
      and (w.requested_action is not null or w.state <> 'performing')
  );
end;
$$;

comment on function geneva.checkpoint_step(bigint, jsonb) is
'Worker protocol: a resumable step saves its cursor (NULL: only asks); true means stop now (pause or cancel requested).';
