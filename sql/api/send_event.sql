-- geneva.send_event: sends an event to a workflow: an approval, a payment, a
-- webhook's news.
--
-- Called by: applications and operators (any SQL client, goclient, the CLI,
-- the dashboard's Waiting page), also from a trigger in the application's own
-- transaction: the event commits or rolls back with it.
-- The event is kept (geneva.events, with session_user as its sender) until a
-- step of the workflow that awaits its name consumes it, the oldest first,
-- each once. When the workflow's scheduled step awaits it now, that step
-- becomes due at once (after its own wait, if that has not ended) and its
-- River job runs without waiting for the timeout; one sent before the wait
-- began is consumed when it begins. A workflow that is paused keeps it for
-- when it is resumed.
--
-- Locks: the workflow row, then its active execution. Records the call
-- (geneva._log_action: the event's name; its payload is in geneva.events).
-- Returns true when the event was recorded; false, recording no event, when
-- the workflow has ended (finished or canceled): the call is logged all the
-- same, with the result {"sent": false}.
-- Raises: 22004 for a NULL workflow id or name; 22023 for an empty name or
-- a payload nested over 64 levels deep; 22001 for a name over 255 bytes or
-- a payload over 1 MiB; P0002 for an unknown workflow. Nothing is written on
-- any error.
create or replace function geneva.send_event(
  p_workflow_id bigint,
  p_event text,
  p_payload jsonb default null
)
returns boolean
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow geneva.workflows;
begin
  perform geneva._check_event(p_event, p_payload);
  v_workflow := geneva._lock_workflow(p_workflow_id);
  if v_workflow.state in ('finished', 'canceled') then
    perform geneva._log_action(
      'send_event', p_workflow_id, jsonb_build_object('event', p_event), jsonb_build_object('sent', false)
    );
    return false;
  end if;
  perform geneva._send_event(v_workflow, p_event, p_payload);
  perform geneva._log_action(
    'send_event', p_workflow_id, jsonb_build_object('event', p_event), jsonb_build_object('sent', true)
  );
  return true;
end;
$$;

comment on function geneva.send_event(bigint, text, jsonb) is
'Sends an event to a workflow; a step awaiting it becomes due at once. False for an ended workflow (no event recorded; the call is logged).';
