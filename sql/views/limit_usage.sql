-- geneva.limit_usage: every limit key in use: its executions in progress
-- (holding a slot: running, or woken and due), waiting (for a slot of the
-- key, or, held by its rate, for a later window reserved for their start),
-- and its starts counted in the current rate window, with the limit's
-- bounds. waiting_since is when the oldest waiter became due (a slot's) or
-- was held (a rate's: its claim found the window full, its updated_at).
-- `limit_name` is the named limit, or the workflow type for a type's own
-- concurrency and rate_limit (`kind` says which); `key` is the group, hero
-- (type:id), type, parent's id or '' (by none).
--
-- For operators (the dashboard's Limits page, `geneva limits`) and metrics.
-- Reads geneva.limit_slots (the slots held), the partial indexes
-- step_executions_limit_waiting (only waiting executions) and
-- step_executions_rate_held (only executions a rate holds) and
-- geneva.limit_windows. The keys of the executions a rate holds are built
-- inline, as geneva._limit_keys builds them (a view's functions run with
-- its reader's privileges), and as geneva.workflow_blockers does.
create or replace view geneva.limit_usage as
with held as (
  select ls.limit_key, count(*) as in_progress
  from geneva.limit_slots ls
  where ls.workflow_id is not null
  group by ls.limit_key
),
waiting as (
  select e.limit_wait_key as limit_key, count(*) as waiting, min(e.scheduled_for) as waiting_since
  from geneva.step_executions e
  -- (a waiter is scheduled: see step_executions_limit_waiting)
  where e.limit_wait_key is not null
  group by e.limit_wait_key
),
rate_held as (
  select k.limit_key, count(*) as waiting, min(e.updated_at) as waiting_since
  from geneva.step_executions e
  join geneva.workflows w on w.id = e.workflow_id
  join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  cross join lateral (
    select 'rate_limit' as kind, w.workflow_type as name, d.definition -> 'rate_limit' ->> 'by' as by
    where d.definition ? 'rate_limit'
    union all
    select 'limit', l.name, l.by
    from jsonb_array_elements_text(
      d.definition -> 'steps' -> (array_position(d.step_names, e.step_name) - 1) -> 'limits'
    ) as n (name)
    join geneva.limits l on l.name = n.name
    where l.rate is not null
  ) r
  cross join lateral (
    select jsonb_build_array(r.kind, r.name, case r.by
      when 'group' then coalesce(w.group_name, '')
      when 'hero' then w.hero_type || ':' || w.hero_id
      when 'type' then w.workflow_type
      when 'parent' then w.parent_id::text
      else ''
    end)::text as limit_key
    -- (a limit by parent holds no workflow without one)
    where r.by is distinct from 'parent' or w.parent_id is not null
  ) k
  where e.state = 'scheduled'
    and e.limit_window_at > geneva.now()
  group by k.limit_key
),
all_waiting as (
  select coalesce(c.limit_key, r.limit_key) as limit_key,
    coalesce(c.waiting, 0) + coalesce(r.waiting, 0) as waiting,
    least(c.waiting_since, r.waiting_since) as waiting_since
  from waiting c
  full join rate_held r on r.limit_key = c.limit_key
),
windows as (
  select lw.limit_key, lw.starts, lw.window_start, lw.window_end
  from geneva.limit_windows lw
  where lw.window_start <= geneva.now() and lw.window_end > geneva.now()
),
usage as (
  select coalesce(h.limit_key, w.limit_key, r.limit_key) as limit_key,
    coalesce(h.in_progress, 0) as in_progress,
    coalesce(w.waiting, 0) as waiting,
    w.waiting_since,
    coalesce(r.starts, 0) as starts_in_window,
    r.window_end
  from held h
  full join all_waiting w on w.limit_key = h.limit_key
  full join windows r on r.limit_key = coalesce(h.limit_key, w.limit_key)
)
select
  u.limit_key::jsonb ->> 0 as kind,
  u.limit_key::jsonb ->> 1 as limit_name,
  u.limit_key::jsonb ->> 2 as key,
  u.in_progress,
  u.waiting,
  u.waiting_since,
  u.starts_in_window,
  u.window_end,
  -- (geneva._limit_capacity's expression, inline: a view's functions run
  -- with its reader's privileges, and the private helpers are granted to
  -- no one)
  case u.limit_key::jsonb ->> 0
    when 'concurrency' then (
      select (d.definition -> 'concurrency' ->> 'limit')::integer
      from geneva.workflow_definitions d where d.workflow_type = u.limit_key::jsonb ->> 1
    )
    when 'limit' then (select l.concurrency from geneva.limits l where l.name = u.limit_key::jsonb ->> 1)
  end as concurrency,
  case u.limit_key::jsonb ->> 0
    when 'rate_limit' then (
      select (d.definition -> 'rate_limit' ->> 'limit')::integer
      from geneva.workflow_definitions d where d.workflow_type = u.limit_key::jsonb ->> 1
    )
    when 'limit' then (select l.rate from geneva.limits l where l.name = u.limit_key::jsonb ->> 1)
  end as rate
from usage u;

comment on view geneva.limit_usage is
'Limits in use, per limit and key: executions in progress, waiting, starts in the current rate window, and the bounds.';
