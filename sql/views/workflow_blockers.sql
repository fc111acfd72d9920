-- geneva.workflow_blockers: why a ready workflow's scheduled execution has
-- not started, with the numbers of the reason: a row per reason (a step held
-- by two rate limits has a row for each). `reason` is one of:
--   wait         its wait (or "after", or a backoff) has not passed:
--                held_until is when it is due.
--   event        it awaits an event none of which has come (the rows of
--                geneva.awaiting_events whose workflow is ready): event,
--                held_until its timeout.
--   concurrency  it waits, without a job, for a slot of a concurrency key
--                (limit_wait_key): the limit (limit_kind, limit_name, key,
--                as in geneva.limit_usage), in_progress of concurrency, and
--                its place in the key's line: position-th of waiting, the
--                waiters of ready workflows in the order a freed slot is
--                passed on (the oldest execution first: geneva._limit_release).
--   rate_limit   a rate window was full at its claim, and its start is
--                reserved for a later window (limit_window_at): per rate key
--                of its step, the starts counted in the current window
--                (starts_in_window) of rate per `per`, and held_until, the
--                start of the window reserved for it.
--   queue        it is due, but no worker serves its queue: River's
--                producers record each queue they work in public.river_queue
--                at their start and every 10 minutes after (updated_at), so
--                a queue no worker reported for 15 minutes, or one paused in
--                River (paused_at), is fetched by no one: queue,
--                queue_reported_at (River's last report of a worker on it,
--                null when none is kept: River deletes a queue's row a day
--                after its last report), queue_paused_at, and
--                last_fetched_at, when a worker last fetched a job of the
--                queue (attempted_at: below).
-- An execution that is due on a served queue has no row: it is in its
-- queue's line (geneva.queue_lag). Paused workflows have none either
-- (geneva.paused_workflows says why they wait).
--
-- Extension point: a step that awaits its children (DESIGN.md, "Children")
-- adds a branch here, reason 'children', once the engine records the wait;
-- the wait and queue branches then leave it out as they leave out an
-- awaited event.
--
-- The keys of a rate limit are built inline, as geneva._limit_keys and
-- geneva._limit_key build them (a view's functions run with its reader's
-- privileges, and the private helpers are granted to no one), and so is a
-- key's concurrency (geneva._limit_capacity); geneva.limit_usage does the
-- same, and tests/workflow_blockers_test.go holds the three together.
--
-- For operators (`geneva show`, the dashboard's workflow and Stuck pages).
-- Each branch reads a workflow's active execution by step_executions_one_active
-- when asked for one workflow; across workflows, the waiters by
-- step_executions_limit_waiting, the rate-held by step_executions_rate_held
-- and the due ones by step_executions_scheduled_for.
create or replace view geneva.workflow_blockers as
-- its wait has not passed
select
  w.id as workflow_id, w.workflow_type, w.hero_type, w.hero_id,
  e.id as execution_id, e.step_name, e.scheduled_for,
  'wait'::text as reason,
  e.scheduled_for as held_until,
  null::text as event,
  null::text as limit_kind, null::text as limit_name, null::text as key,
  null::bigint as in_progress, null::integer as concurrency, null::bigint as position, null::bigint as waiting,
  null::bigint as starts_in_window, null::integer as rate, null::interval as per,
  null::text as queue, null::timestamptz as queue_reported_at, null::timestamptz as queue_paused_at,
  null::timestamptz as last_fetched_at
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
where e.state = 'scheduled'
  and w.state = 'ready'
  and e.scheduled_for > geneva.now()
  and e.limit_wait_key is null
  and not coalesce(e.limit_window_at > geneva.now(), false)
  and not (
    e.await_event is not null and e.event_id is null
    and not exists (
      select from geneva.events ev
      where ev.workflow_id = e.workflow_id and ev.name = any (coalesce(e.await_names, array[e.await_event]))
        and ev.consumed_by is null and ev.id > coalesce(e.await_after, 0)
    )
  )
union all
-- it awaits an event (geneva.awaiting_events' rule)
select
  w.id, w.workflow_type, w.hero_type, w.hero_id,
  e.id, e.step_name, e.scheduled_for,
  'event',
  e.await_until,
  e.await_event,
  null, null, null,
  null, null, null, null,
  null, null, null,
  null, null, null,
  null
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
where e.state = 'scheduled'
  and w.state = 'ready'
  and e.await_event is not null
  and e.event_id is null
  and not exists (
    select from geneva.events ev
    where ev.workflow_id = e.workflow_id and ev.name = e.await_event and ev.consumed_by is null
  )
union all
-- it waits for a slot of a concurrency key
select
  w.id, w.workflow_type, w.hero_type, w.hero_id,
  e.id, e.step_name, e.scheduled_for,
  'concurrency',
  null,
  null,
  e.limit_wait_key::jsonb ->> 0, e.limit_wait_key::jsonb ->> 1, e.limit_wait_key::jsonb ->> 2,
  (
    select count(*) from geneva.limit_slots s
    where s.limit_key = e.limit_wait_key and s.workflow_id is not null
  ),
  case e.limit_wait_key::jsonb ->> 0
    when 'concurrency' then (
      select (d.definition -> 'concurrency' ->> 'limit')::integer
      from geneva.workflow_definitions d where d.workflow_type = e.limit_wait_key::jsonb ->> 1
    )
    when 'limit' then (select l.concurrency from geneva.limits l where l.name = e.limit_wait_key::jsonb ->> 1)
  end,
  l.position,
  l.waiting,
  null, null, null,
  null, null, null,
  null
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
cross join lateral (
  -- (the key as a range: see geneva._limit_release)
  select count(*) filter (where x.id <= e.id) as position, count(*) as waiting
  from geneva.step_executions x
  join geneva.workflows xw on xw.id = x.workflow_id
  where x.limit_wait_key >= e.limit_wait_key and x.limit_wait_key <= e.limit_wait_key
    and xw.state = 'ready'
) l
where e.limit_wait_key is not null
  and w.state = 'ready'
union all
-- a rate window reserved for it has not begun
select
  w.id, w.workflow_type, w.hero_type, w.hero_id,
  e.id, e.step_name, e.scheduled_for,
  'rate_limit',
  e.limit_window_at,
  null,
  r.kind, r.name, k.value,
  null, null, null, null,
  coalesce((
    select lw.starts from geneva.limit_windows lw
    where lw.limit_key = k.limit_key
      and lw.window_start <= geneva.now() and lw.window_end > geneva.now()
  ), 0),
  r.rate, r.per,
  null, null, null,
  null
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
cross join lateral (
  select 'rate_limit' as kind, w.workflow_type as name, d.definition -> 'rate_limit' ->> 'by' as by,
    (d.definition -> 'rate_limit' ->> 'limit')::integer as rate,
    case jsonb_typeof(d.definition -> 'rate_limit' -> 'per')
      when 'number' then make_interval(secs => (d.definition -> 'rate_limit' ->> 'per')::double precision)
      else (d.definition -> 'rate_limit' ->> 'per')::interval
    end as per
  where d.definition ? 'rate_limit'
  union all
  select 'limit', l.name, l.by, l.rate, l.per
  from jsonb_array_elements_text(
    d.definition -> 'steps' -> (array_position(d.step_names, e.step_name) - 1) -> 'limits'
  ) as n (name)
  join geneva.limits l on l.name = n.name
  where l.rate is not null
) r
cross join lateral (
  select v.value, jsonb_build_array(r.kind, r.name, v.value)::text as limit_key
  from (
    select case r.by
      when 'group' then coalesce(w.group_name, '')
      when 'hero' then w.hero_type || ':' || w.hero_id
      when 'type' then w.workflow_type
      when 'parent' then w.parent_id::text
      else ''
    end as value
  ) v
  -- (a limit by parent holds no workflow without one)
  where r.by is distinct from 'parent' or w.parent_id is not null
) k
where e.state = 'scheduled'
  and e.limit_window_at > geneva.now()
  and w.state = 'ready'
union all
-- due, on a queue no worker serves
select
  w.id, w.workflow_type, w.hero_type, w.hero_id,
  e.id, e.step_name, e.scheduled_for,
  'queue',
  null,
  null,
  null, null, null,
  null, null, null, null,
  null, null, null,
  u.queue, u.reported_at, u.paused_at, u.last_fetched_at
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
-- the queues of the definitions no worker serves, each read once, not per
-- execution (distinct: a subquery of its own), and River's last fetch of
-- each of those, probed after the distinct (so the planner counts a probe a
-- queue, not one a definition's queue: its estimate stays under JIT's)
join (
  select q.queue, q.reported_at, q.paused_at,
    -- (River's last fetch: each state's and priority's most recently
    -- scheduled job of the queue, the last River fetched of those, read by
    -- River's fetching index, a probe each: the newest fetch of a queue
    -- River fetches by priority, then scheduled time; never a scan of the
    -- queue's jobs. None without a worker's report kept.)
    case when q.reported then (
      select max(x.attempted_at)
      from (values ('running'), ('completed'), ('retryable'), ('cancelled'), ('discarded')) as s (state)
      cross join generate_series(1, 4) as p (priority)
      cross join lateral (
        select j.attempted_at
        from public.river_job j
        where j.state = s.state::public.river_job_state and j.queue = q.queue and j.priority = p.priority
        order by j.scheduled_at desc, j.id desc
        limit 1
      ) x
    ) end as last_fetched_at
  from (
    select distinct on (n.queue) n.queue, rq.name is not null as reported, rq.updated_at as reported_at, rq.paused_at
    from geneva.workflow_definitions qd
    cross join lateral unnest(qd.step_queues || qd.queue) as n (queue)
    left join public.river_queue rq on rq.name = n.queue
    where rq.name is null or rq.paused_at is not null or rq.updated_at < geneva.now() - interval '15 minutes'
  ) q
) u
  -- (the step's queue, as geneva._step_queue has it)
  on u.queue = coalesce(d.step_queues[array_position(d.step_names, e.step_name)], d.queue)
where e.state = 'scheduled'
  and e.scheduled_for <= geneva.now()
  and e.limit_wait_key is null
  and w.state = 'ready'
  and not (
    e.await_event is not null and e.event_id is null
    and not exists (
      select from geneva.events ev
      where ev.workflow_id = e.workflow_id and ev.name = any (coalesce(e.await_names, array[e.await_event]))
        and ev.consumed_by is null and ev.id > coalesce(e.await_after, 0)
    )
  );

comment on view geneva.workflow_blockers is
'Why a ready workflow''s scheduled execution has not started: its wait, an awaited event, a concurrency key (in progress of the limit, its place in line), a rate window (when it frees), or a queue no worker serves.';
