-- geneva._send_event: records an event for one ongoing workflow and, when the
-- workflow's scheduled execution awaits that event and has none yet, makes it
-- due: now, or when its own wait ends if the event came during it (its
-- await_from). Its River job is brought forward when the workflow is ready;
-- a paused workflow's execution runs when it is resumed
-- (geneva.resume_workflow), with the event. An execution awaiting any of
-- several names (await_names) is made due by each of them; one awaiting
-- "since": "wait" is made due by this event, sent after the step was
-- reached (its id is larger than any it ignores: geneva._await_after).
--
-- An event whose name is in the workflow's type's cancel_on (its
-- definition) cancels the workflow: a ready or paused one now, in the
-- sender's transaction (its scheduled execution, if any, ends
-- canceled_by_event: geneva._signal_effects' (event, cancel) row); a
-- performing one at its step boundary (requested_action cancel_by_event,
-- in place of an operator's pause requested, not of an operator's cancel,
-- which stays the operator's): the running step's own result is recorded,
-- then the workflow is canceled instead of moving on
-- (geneva._advance_many). The event is recorded all the same; no step
-- consumes it.
--
-- With a key (p_key), an event the workflow already has under that key
-- (sent, consumed or not, and kept as long as the workflow: its events go
-- with it) makes this send record nothing and change nothing. A rival
-- sending the same key concurrently holds the workflow's row (the caller's
-- lock); the unique index events_workflow_key is the arbiter all the same.
--
-- Called by: geneva.send_event, geneva.send_hero_event, with the name,
-- payload and key checked (geneva._check_event) and the workflow locked and
-- ongoing.
-- Locks: the workflow's active execution (after the workflow's, which the
-- caller holds); reads the type's definition.
-- Returns true when the event was recorded; false when its key was already
-- the workflow's.
create or replace function geneva._send_event(
  p_workflow geneva.workflows,
  p_event text,
  p_payload jsonb,
  p_key text
)
returns boolean
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_execution geneva.step_executions;
begin
  -- the only inserter of events (sql/guards/events_guard.sql)
  perform pg_catalog.set_config('geneva.sending', 'on', true);
  if p_key is null then
    insert into geneva.events (workflow_id, name, payload, sent_at, sent_by)
    values (p_workflow.id, p_event, p_payload, v_now, session_user);
  else
    insert into geneva.events (workflow_id, name, payload, sent_at, sent_by, key)
    values (p_workflow.id, p_event, p_payload, v_now, session_user, p_key)
    on conflict (workflow_id, key) where key is not null do nothing;
    if not found then
      perform pg_catalog.set_config('geneva.sending', '', true);
      return false;
    end if;
  end if;
  perform pg_catalog.set_config('geneva.sending', '', true);

  -- an event of the type's cancel_on: the workflow is canceled now, or at
  -- its running step's end
  if exists (
    select from geneva.workflow_definitions d
    where d.workflow_type = p_workflow.workflow_type and d.definition -> 'cancel_on' ? p_event
  ) then
    if p_workflow.state = 'performing' then
      update geneva.workflows w
      set requested_action = 'cancel_by_event',
        updated_at = v_now
      where w.id = p_workflow.id and w.requested_action is distinct from 'cancel';
    else
      v_execution := geneva._lock_active_execution(p_workflow.id);
      if v_execution.id is not null then
        perform geneva._end_as(v_execution, 'event', 'cancel');
      end if;
      perform geneva._advance(p_workflow, null, 'cancel', null);
    end if;
    return true;
  end if;

  select e.* into v_execution
  from geneva.step_executions e
  where e.workflow_id = p_workflow.id
    and e.state = 'scheduled'
    and (e.await_event = p_event or p_event = any (e.await_names))
    and e.event_id is null
    and e.scheduled_for > greatest(e.await_from, v_now)
  for no key update;
  if found then
    update geneva.step_executions e
    set scheduled_for = greatest(e.await_from, v_now),
      updated_at = v_now
    where e.id = v_execution.id
    returning e.* into v_execution;
    if p_workflow.state = 'ready' then
      perform geneva._ensure_job(p_workflow, v_execution);
    end if;
  end if;
  return true;
end;
$$;
