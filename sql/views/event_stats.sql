-- geneva.event_stats: the events kept (geneva.events, then
-- geneva.events_history once their workflow moved into history, until
-- retention drops or detaches its partition: docs/history.md), per workflow
-- type and event name: how many were sent, consumed by a step, and are still
-- waiting for a step that awaits them (in history: never consumed before
-- their workflow ended), and when the last one was sent.
--
-- For operators and metrics (promgeneva's events gauges, at every scrape).
-- The live events are counted here (joined to their workflows for the
-- type); the moved ones are not read: the move folds them into
-- geneva.history_event_counts (by day, type and name; they never change
-- again) and retention takes a partition's days off it when it drops or
-- detaches the partition (geneva._history_forget). So its cost follows the
-- live tables (ongoing work, and what ended within move_after) and a few
-- rows a day of retention, not the events history holds.
create or replace view geneva.event_stats as
select
  s.workflow_type,
  s.event,
  sum(s.sent)::bigint as sent,
  sum(s.consumed)::bigint as consumed,
  (sum(s.sent) - sum(s.consumed))::bigint as pending,
  max(s.last_sent_at) as last_sent_at
from (
  select w.workflow_type, ev.name as event, count(*) as sent, count(ev.consumed_by) as consumed,
    max(ev.sent_at) as last_sent_at
  from geneva.events ev
  join geneva.workflows w on w.id = ev.workflow_id
  group by w.workflow_type, ev.name
  union all
  select c.workflow_type, c.event, c.sent, c.consumed, c.last_sent_at
  from geneva.history_event_counts c
) s
group by s.workflow_type, s.event;

comment on view geneva.event_stats is
'Events kept, per workflow type and event name: sent, consumed, pending, last sent.';
