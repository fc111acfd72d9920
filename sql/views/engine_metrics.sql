-- geneva.engine_metrics: the engine's state as metric samples, in one cheap
-- query, for Prometheus (package promgeneva serves it at /metrics) and any
-- other monitoring that reads SQL. Right whatever workers run or died: it
-- reads only the tables.
--
-- One row per sample: metric names the series; workflow_type, step_name and
-- label (whose meaning depends on the metric) are its labels; value is the
-- number. Every metric is a gauge:
--   workflows            ongoing workflows (ready, performing, paused) per
--                        type; label: the state. Ended workflows are not
--                        counted: they grow until housekeeping's retention
--                        removes them, and counting them would read them all.
--   paused_workflows     paused workflows per type; label: the class of the
--                        error that paused them ('' for an operator's pause).
--   stuck_executions     geneva.stuck_executions per type; label: the state.
--   runaway_workflows    geneva.runaway_workflows per type (flagged runaway
--                        chains: too many executions, or one step repeated
--                        too often).
--   queue_due_steps      per queue (label): scheduled executions of ready
--                        workflows that are due (scheduled_for <= now);
--                        every queue of a definition has a row, 0 when none.
--   queue_oldest_due_seconds  per queue (label): how long the oldest of those
--                        has been due, in seconds; 0 when none.
--   executions_ended_5m  executions that ended in the last five minutes,
--                        counted by whole minutes: from the start of the
--                        minute five minutes ago (5 to 6 minutes, so an
--                        end is counted at once), per type and step; label:
--                        the outcome. A window, not a cumulative count
--                        (housekeeping deletes history, so a count of rows
--                        would not be monotonic); divide by 300 for a rate
--                        (up to a fifth high).
--   history_workflows    workflows moved into history and not yet dropped
--                        (geneva.history_counts), per type; label: the state.
--   history_partitions   history partitions attached (each interval's, of
--                        geneva.workflows_history; the partitions ahead too).
--   history_oldest_seconds  how long ago the oldest partition's interval
--                        began, while history holds any workflow (0 when
--                        none): about the retention plus an interval when
--                        retention keeps up.
--   history_detached_partitions  partitions retention detached (archive =
--                        'detach') that geneva archive has not yet written
--                        out and dropped.
--   workflows_to_move    ended workflows still in the live tables more than
--                        move_after after their end: waiting for
--                        housekeeping's move (a parent with ongoing
--                        children keeps its ended tree there); a backlog
--                        that grows means the move does not keep up.
--   joins_waiting        workflows whose scheduled step is a join ("await":
--                        {"children": …}) still waiting for its children
--                        (geneva.awaiting_events' event geneva:children;
--                        paused ones too), per type.
--   join_children_ongoing  the children those joins wait on that have not
--                        ended (children less their ends, counted on
--                        geneva.children_stripes), per type.
--
-- Reads workflows_ongoing_type for the ongoing states, each paused workflow's
-- last ended execution (step_executions_workflow_id), the partial indexes
-- step_executions_scheduled_for and step_executions_in_progress_updated_at,
-- the runaway flags (and the flagged workflows' executions),
-- and the ended executions' counts kept per minute
-- (ended_executions_by_minute and ended_execution_deltas), the catalog
-- (the history partitions) and geneva.history_counts (a few rows a day),
-- the ended workflows waiting to move (workflows_ended_transitioned_at),
-- and the waiting joins (geneva.awaiting_events, their parents' rows by
-- primary key and their stripes; never history):
-- its cost follows the ongoing workflows, not the history nor the load. (geneva.now()
-- is written out in each condition rather than read from a CTE: the planner
-- estimates the ranges from its value, and picks index scans.)
create or replace view geneva.engine_metrics as
with due as (
  -- (the step's queue, as geneva._step_queue has it: a view reads no helper)
  select coalesce(d.step_queues[array_position(d.step_names, e.step_name)], d.queue) as queue, e.scheduled_for
  from geneva.step_executions e
  join geneva.workflows w on w.id = e.workflow_id
  join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  where e.state = 'scheduled'
    and e.scheduled_for <= geneva.now()
    and e.limit_wait_key is null
    and w.state = 'ready'
),
queues as (
  select distinct q.queue
  from geneva.workflow_definitions d
  cross join lateral unnest(d.step_queues || d.queue) as q (queue)
)
select 'workflows'::text as metric, w.workflow_type, null::text as step_name, w.state as label,
  count(*)::double precision as value
from geneva.workflows w
where w.finished_at is null and w.canceled_at is null
group by w.workflow_type, w.state
union all
select 'paused_workflows', p.workflow_type, null, coalesce(p.last_error_class, ''), count(*)
from geneva.paused_workflows p
group by p.workflow_type, coalesce(p.last_error_class, '')
union all
select 'stuck_executions', s.workflow_type, null, s.state, count(*)
from geneva.stuck_executions s
group by s.workflow_type, s.state
union all
select 'runaway_workflows', r.workflow_type, null, null, count(*)
from geneva.runaway_workflows r
group by r.workflow_type
union all
select 'queue_due_steps', null, null, q.queue, count(due.scheduled_for)
from queues q
left join due on due.queue = q.queue
group by q.queue
union all
select 'queue_oldest_due_seconds', null, null, q.queue,
  coalesce(extract(epoch from geneva.now() - min(due.scheduled_for)), 0)::double precision
from queues q
left join due on due.queue = q.queue
group by q.queue
union all
select 'executions_ended_5m', c.workflow_type, c.step_name, c.outcome, sum(c.executions)::double precision
from (
  select m.workflow_type, m.step_name, m.outcome, m.executions
  from geneva.ended_executions_by_minute m
  where m.minute >= date_trunc('minute', geneva.now() - interval '5 minutes', 'UTC')
    and m.minute <= geneva.now()
  union all
  select d.workflow_type, d.step_name, d.outcome, d.executions
  from geneva.ended_execution_deltas d
  where d.minute >= date_trunc('minute', geneva.now() - interval '5 minutes', 'UTC')
    and d.minute <= geneva.now()
) c
group by c.workflow_type, c.step_name, c.outcome
union all
select 'history_workflows', c.workflow_type, null, c.state, sum(c.workflows)::double precision
from geneva.history_counts c
group by c.workflow_type, c.state
union all
select 'history_partitions', null, null, null, count(*)::double precision
from pg_catalog.pg_inherits i
where i.inhparent = 'geneva.workflows_history'::regclass
union all
select 'history_oldest_seconds', null, null, null,
  coalesce(extract(epoch from geneva.now() - min(
    (regexp_match(pg_catalog.pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\)'))[1]::date::timestamp
      at time zone 'UTC'
  )), 0)::double precision
from pg_catalog.pg_inherits i
join pg_catalog.pg_class c on c.oid = i.inhrelid
where i.inhparent = 'geneva.workflows_history'::regclass
  and exists (select from geneva.history_counts h)
union all
select 'history_detached_partitions', null, null, null, count(*)::double precision
from pg_catalog.pg_class c
where c.relnamespace = 'geneva'::regnamespace
  and c.relname ~ '^workflows_history_[0-9]{8}'
  and c.relkind = 'r'
  and not c.relispartition
union all
select 'workflows_to_move', null, null, null, count(*)::double precision
from geneva.workflows w
where (w.finished_at is not null or w.canceled_at is not null)
  and w.transitioned_at < geneva.now() - (select s.move_after from geneva.housekeeping_settings s)
union all
select m.metric, j.workflow_type, null, null, m.value
from (
  select a.workflow_type, count(*)::double precision as joins,
    -- (geneva._children_ended_now's expression, inline: a view's reader is
    -- not granted the function)
    sum(case when w.children = w.children_ended then 0
      else coalesce((select sum(s.ongoing) from geneva.children_stripes s where s.parent_id = w.id), 0)
    end)::double precision as ongoing
  from geneva.awaiting_events a
  join geneva.workflows w on w.id = a.workflow_id
  where a.event = 'geneva:children'
  group by a.workflow_type
) j
cross join lateral (values ('joins_waiting', j.joins), ('join_children_ongoing', j.ongoing)) m (metric, value);

comment on view geneva.engine_metrics is
'The engine''s state as gauge samples (metric, workflow_type, step_name, label, value) for Prometheus; one cheap query.';
