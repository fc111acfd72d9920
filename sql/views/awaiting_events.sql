-- geneva.awaiting_events: what waits for which event: every scheduled step
-- execution that awaits an event (its definition's "await") none of which has
-- come for its workflow yet, with since when it waits (after the step's own
-- wait), when its timeout falls and what then happens. A paused workflow's
-- kept execution is listed too (workflow_state says so); an execution whose
-- event has come, and that is only waiting for its job, is not. event is
-- the name it awaits (the first, for an await of any of several); events
-- every name it awaits; since, wait (only events sent after the step was
-- reached count) or kept.
--
-- For operators (the dashboard's Waiting page, `geneva events`) and metrics
-- (workflows awaiting, per type and event). Reads step_executions_awaiting,
-- then each row's workflow and events by primary key and
-- events_workflow_name.
create or replace view geneva.awaiting_events as
select
  w.id as workflow_id,
  w.workflow_type,
  w.hero_type,
  w.hero_id,
  w.state as workflow_state,
  e.id as execution_id,
  e.step_name,
  e.await_event as event,
  e.await_from as waiting_since,
  e.await_until as timeout_at,
  coalesce(
    d.definition -> 'steps' -> (array_position(d.step_names, e.step_name) - 1) -> 'await' ->> 'on_timeout',
    'run'
  ) as on_timeout,
  -- (appended: create or replace view keeps the columns above in place)
  coalesce(e.await_names, array[e.await_event]) as events,
  case when e.await_after is not null then 'wait' else 'kept' end as since
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
left join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
where e.state = 'scheduled'
  and e.await_event is not null
  and e.event_id is null
  and not exists (
    select from geneva.events ev
    where ev.workflow_id = e.workflow_id and ev.name = any (coalesce(e.await_names, array[e.await_event]))
      and ev.consumed_by is null and ev.id > coalesce(e.await_after, 0)
  );

comment on view geneva.awaiting_events is
'Steps waiting for an event: workflow, step, event, since when, timeout at and what the timeout does.';
