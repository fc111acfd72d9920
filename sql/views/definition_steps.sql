-- geneva.definition_steps: the steps of each registered workflow type, in
-- run order, with what each does: the wait before it (and its offset from
-- the workflow's start, after, last), its queue (the
-- type's, or an HTTP step's own), an HTTP step's endpoint, the definition's
-- version; the event it awaits (await_event: the first, for an await of any
-- of several; await_events: every name; await_since: wait or kept), how
-- long (await_timeout) and
-- what its timeout then does (on_timeout: run, cancel, pause or skip); the
-- named limits it is held to (limits); its skip_if; and its own exception
-- policies (on_exception, as defined: an object or a list; NULL when the
-- step has none and the type's, then pause, apply). The type's own
-- on_exception, concurrency and rate_limit are its definition's
-- (geneva.definition_versions).
--
-- For the dashboard's step list of a workflow and its Definitions page,
-- and `geneva definitions` (filter by workflow_type). Reads
-- workflow_definitions by its primary key.
create or replace view geneva.definition_steps as
select
  d.workflow_type,
  s.position::integer as position,
  s.step_name,
  d.step_waits[s.position] as wait,
  d.step_queues[s.position] as queue,
  d.updated_at as defined_at,
  j.step -> 'http' ->> 'url' as http_url,
  d.version,
  -- (appended: create or replace view keeps the columns above in place)
  case when jsonb_typeof(j.step -> 'await' -> 'event') = 'array' then j.step -> 'await' -> 'event' ->> 0
    else j.step -> 'await' ->> 'event'
  end as await_event,
  d.step_await_timeouts[s.position] as await_timeout,
  case when j.step ? 'await' then coalesce(j.step -> 'await' ->> 'on_timeout', 'run') end as on_timeout,
  case when j.step ? 'limits' then array(select jsonb_array_elements_text(j.step -> 'limits')) end as limits,
  j.step -> 'skip_if' as skip_if,
  j.step -> 'on_exception' as on_exception,
  d.step_afters[s.position] as after,
  case
    when jsonb_typeof(j.step -> 'await' -> 'event') = 'array'
      then array(select jsonb_array_elements_text(j.step -> 'await' -> 'event'))
    when j.step -> 'await' ? 'event' then array[j.step -> 'await' ->> 'event']
  end as await_events,
  case when j.step -> 'await' ? 'event' then coalesce(j.step -> 'await' ->> 'since', 'kept') end as await_since
from geneva.workflow_definitions d
cross join lateral unnest(d.step_names) with ordinality as s(step_name, position)
cross join lateral (select d.definition -> 'steps' -> (s.position::integer - 1) as step) j;

comment on view geneva.definition_steps is
'The steps of each workflow type in run order: waits, queues, HTTP endpoints, awaited events, limits, skip_if and exception policies.';
