-- bench/history/reads_fill.sql: fills an installed database (dist/geneva.sql)
-- with :n ended workflows in history (5 executions and 1 event each, ended
-- over the last 30 days: 30 day partitions), then 1,000 live ongoing ones.
-- For bench/history/reads.sh: the reads across live ∪ history at that volume.
-- Run as a superuser (it writes the history tables and the counts directly,
-- as no function does: geneva.moving and geneva.folding, the flags of the
-- move and the fold, are set for the session so that the guards let it).
\set ON_ERROR_STOP on
set geneva.moving = 'on';
set geneva.folding = 'on';
select geneva.define_workflow('Type' || i, '{"steps":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"},{"name":"e"}]}')
from generate_series(0, 9) i;
select count(geneva._history_partition(d::date))
from generate_series(current_date - 31, current_date, interval '1 day') d;

insert into geneva.workflows_history (id, workflow_type, hero_type, hero_id, state, allow_multiple,
  created_at, updated_at, started_at, transitioned_at, finished_at, canceled_at, children, children_ended,
  next_step_name, definition_version, started_version, ended_on)
select g, 'Type' || (g % 10), 'User', g::text, case when g % 20 = 0 then 'canceled' else 'finished' end, false,
  t, t, t, t, case when g % 20 <> 0 then t end, case when g % 20 = 0 then t end, 0, 0,
  case when g % 20 = 0 then 'e' end, 1, 1, (t at time zone 'UTC')::date
from generate_series(1, :n) g,
  lateral (select now() - interval '30 days' + g * (interval '30 days' / greatest(:n, 1)) as t) x;

insert into geneva.step_executions_history (id, workflow_id, step_name, attempt, scheduled_for, started_at,
  created_at, state, outcome, finished_at, completed_at, failed_at, error_class_name, error_message,
  metadata, updated_at, ended_on)
select (w.id - 1) * 5 + k, w.id, s, 1, w.transitioned_at, w.transitioned_at, w.transitioned_at,
  case when failing then 'failed' else 'completed' end,
  case when failing then 'canceled_by_exception' else 'success' end,
  w.transitioned_at, case when not failing then w.transitioned_at end, case when failing then w.transitioned_at end,
  case when failing then case when w.id % 1000 = 0 then 'Rare' else 'Boom' end end,
  case when failing then 'it broke' end,
  '{}', w.transitioned_at, w.ended_on
from geneva.workflows_history w,
  lateral (select k, (array['a', 'b', 'c', 'd', 'e'])[k] as s, (w.state = 'canceled' and k = 5) as failing
           from generate_series(1, 5) k) x;

insert into geneva.events_history (id, workflow_id, name, payload, sent_at, sent_by, ended_on)
select w.id, w.id, 'ping', '{"n": 1}', w.transitioned_at, 'bench', w.ended_on
from geneva.workflows_history w;

-- what the move and the fold would have counted (geneva.history_counts,
-- geneva.ended_workflow_counts: geneva.workflow_counts, count_workflows)
insert into geneva.history_counts (ended_on, workflow_type, state, workflows, step_executions)
select w.ended_on, w.workflow_type, w.state, count(*), count(*) * 5
from geneva.workflows_history w
group by 1, 2, 3;
insert into geneva.ended_workflow_counts (workflow_type, state, workflows)
select c.workflow_type, c.state, sum(c.workflows)
from geneva.history_counts c
group by 1, 2;
-- and the events' fold (geneva.history_event_counts), as the move writes it
select geneva._history_event_counts_fill();

select setval('geneva.workflows_id_seq', :n + 1);
select setval('geneva.step_executions_id_seq', :n * 5 + 1);
select setval('geneva.events_id_seq', :n + 1);
select count(geneva.create_workflow('Type' || (i % 10), 'User', 'live' || i)) from generate_series(1, 1000) i;
vacuum analyze geneva.workflows_history, geneva.step_executions_history, geneva.events_history,
  geneva.workflows, geneva.step_executions, geneva.events;
