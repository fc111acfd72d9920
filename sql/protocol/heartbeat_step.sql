-- geneva.heartbeat_step: a running step's sign of life.
--
-- Called by: the worker, every Config.HeartbeatInterval while a step function
-- runs, so that housekeeping does not take a long step for one whose worker
-- died (it recovers in_progress executions by updated_at). One UPDATE of the
-- execution row; no other lock.
-- Returns whether the execution is still in_progress (false: something else
-- ended it, e.g. housekeeping recovered it, and the step's outcome will not be
-- recorded).
-- Raises: 22004 for a NULL id.
create or replace function geneva.heartbeat_step(p_execution_id bigint)
returns boolean
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_execution_id is null then
    raise exception 'execution id must not be null' using errcode = '22004';
  end if;

  update geneva.step_executions e
  set updated_at = geneva.now()
  where e.id = p_execution_id
    and e.state = 'in_progress';
  return found;
end;
$$;

comment on function geneva.heartbeat_step(bigint) is
'Worker protocol: a running step''s sign of life for housekeeping; false when the execution is no longer in_progress.';
