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
-- began is consumed when it begins (unless the step awaits it "since":
-- "wait"). A workflow that is paused keeps it for when it is resumed. An
-- event named in the type's cancel_on cancels the workflow: now when it is
-- ready or paused, when its running step ends when it performs
-- (canceled_by_event; geneva._send_event).
--
-- p_key: the sender's name for this event (a webhook's delivery id, up to
-- 255 bytes; NULL for none). A key the workflow already has (an event sent
-- with it before, consumed or not; kept as long as the workflow's events,
-- which go with it) records nothing: a delivery repeated, even
-- concurrently, is one event. Keys are the workflow's own: another
-- workflow's key does not count.
--
-- Locks: the workflow row, then its active execution. Records the call
-- (geneva._log_action: the event's name and key; its payload is in
-- geneva.events).
-- Returns true when the event was recorded; false, recording no event, when
-- the workflow has ended (finished or canceled) or already has the key: the
-- call is logged all the same, with the result {"sent": false} (and
-- "duplicate": true for the key).
-- Raises: 22004 for a NULL workflow id or name; 22023 for an empty name or
-- key, or a payload nested over 64 levels deep; 22001 for a name or key over
-- 255 bytes or a payload over 1 MiB; P0002 for an unknown workflow. Nothing
-- is written on any error.
create or replace function geneva.send_event(
  p_workflow_id bigint,
  p_event text,
  p_payload jsonb default null,
  p_key text default null
)
returns boolean
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow geneva.workflows;
  v_arguments jsonb;
begin
  perform geneva._check_event(p_event, p_payload, p_key);
  v_arguments := jsonb_build_object('event', p_event);
  if p_key is not null then
    v_arguments := v_arguments || jsonb_build_object('key', p_key);
  end if;
  v_workflow := geneva._lock_workflow(p_workflow_id);
  if v_workflow.state in ('finished', 'canceled') then
    perform geneva._log_action('send_event', p_workflow_id, v_arguments, jsonb_build_object('sent', false));
    return false;
  end if;
  if not geneva._send_event(v_workflow, p_event, p_payload, p_key) then
    perform geneva._log_action(
      'send_event', p_workflow_id, v_arguments, jsonb_build_object('sent', false, 'duplicate', true)
    );
    return false;
  end if;
  perform geneva._log_action('send_event', p_workflow_id, v_arguments, jsonb_build_object('sent', true));
  return true;
end;
$$;

comment on function geneva.send_event(bigint, text, jsonb, text) is
'Sends an event to a workflow; a step awaiting it becomes due at once. False for an ended workflow or a key the workflow already has (no event recorded; the call is logged).';
