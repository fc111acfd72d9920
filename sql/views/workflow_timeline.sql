-- geneva.workflow_timeline: one row per execution, in order, with how long it
-- waited for a worker (queue lag: started - scheduled) and how long it ran,
-- and its error: the recorded class, message and every class of its chain
-- (error_classes); an HTTP step's endpoint (http_url, from the current
-- definition: its status is in the error class, http.status.NNN, and the
-- reply's first 4 KB in the message, when it failed).
--
-- For `geneva show` and dashboards; filter by workflow_id (it reads
-- step_executions_workflow_id). A resumable step's chain of executions reads
-- as one step's progress: each row's cursor (where it got to) and the
-- execution it continues (continues_from_id). A step that awaited an event
-- has the event it received (event_id, event_name, event_payload, and who
-- sent it when: event_sent_by, the login role, event_sent_at); every
-- attempt of the step carries the same one.
--
-- Reads across history (docs/history.md): an execution, its workflow and
-- its event are joined on (id, ended_on) in geneva._step_executions_all,
-- _workflows_all and _events_all, each in its own table or partition; a
-- moved workflow's executions are read from each history partition's
-- step_executions_history_workflow_id, its events from
-- events_history_workflow_id (an execution receives its own workflow's
-- events: the join names the workflow, so that a filter by workflow_id
-- reaches the events' index too, where a probe by event id would cost
-- every partition's primary key a row). The planner, which counts a few
-- rows of one workflow in every partition, would choose a parallel plan
-- whose workers take longer to start than the read takes (14 ms against
-- 0.6 ms for one workflow at a million in history): the view names
-- pg_catalog.current_schema(), which is parallel unsafe, so that no query
-- of it is planned parallel (the condition is folded away once that is
-- decided: it costs nothing at run time).
create or replace view geneva.workflow_timeline as
select
  e.workflow_id,
  w.workflow_type,
  w.hero_type,
  w.hero_id,
  e.id as execution_id,
  e.step_name,
  e.state,
  e.outcome,
  e.scheduled_for,
  e.started_at,
  e.finished_at,
  e.started_at - e.scheduled_for as queue_lag,
  e.finished_at - e.started_at as run_time,
  e.error_class_name,
  e.error_message,
  e.metadata ->> 'reattempt_reason' as reattempt_reason,
  e.cursor,
  e.continues_from_id,
  e.error_classes,
  d.definition -> 'steps' -> (array_position(d.step_names, e.step_name) - 1) -> 'http' ->> 'url' as http_url,
  -- (appended: create or replace view keeps the columns above in place)
  e.event_id,
  ev.name as event_name,
  ev.payload as event_payload,
  ev.sent_by as event_sent_by,
  ev.sent_at as event_sent_at
from geneva._step_executions_all e
join geneva._workflows_all w on w.id = e.workflow_id and w.ended_on = e.ended_on
left join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
left join geneva._events_all ev
  on ev.id = e.event_id and ev.ended_on = e.ended_on and ev.workflow_id = e.workflow_id
where pg_catalog.current_schema() is not null or true
order by e.workflow_id, e.id;

comment on view geneva.workflow_timeline is
'One row per step execution with its queue lag, run time, error and the event it received; filter by workflow_id.';
