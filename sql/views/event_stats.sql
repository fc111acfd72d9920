-- geneva.event_stats: the events kept (geneva.events, until housekeeping's
-- retention deletes them with their workflow), per workflow type and event
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
from geneva.events ev
join geneva.workflows w on w.id = ev.workflow_id
group by w.workflow_type, ev.name;

comment on view geneva.event_stats is
'Events kept, per workflow type and event name: sent, consumed, pending, last sent.';
