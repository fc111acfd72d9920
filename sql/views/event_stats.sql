-- geneva.event_stats: the events kept (geneva.events, then
-- geneva.events_history once their workflow moved into history, until
-- retention drops its partition: docs/history.md), per workflow type and event
-- name: how many were sent, consumed by a step, and are still waiting for a
-- step that awaits them, and when the last one was sent.
--
-- For operators and metrics (promgeneva's events gauges). Counts every kept
-- event: its cost grows with the events of the retention window.
create or replace view geneva.event_stats as
select
  w.workflow_type,
  ev.name as event,
  count(*) as sent,
  count(ev.consumed_by) as consumed,
  count(*) - count(ev.consumed_by) as pending,
  max(ev.sent_at) as last_sent_at
from geneva._events_all ev
join geneva._workflows_all w on w.id = ev.workflow_id and w.ended_on = ev.ended_on
group by w.workflow_type, ev.name;

comment on view geneva.event_stats is
'Events kept, per workflow type and event name: sent, consumed, pending, last sent.';
