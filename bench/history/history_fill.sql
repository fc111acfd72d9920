-- Appended to dist/geneva.sql by engine_history.sh, or run alone
-- (psql -v n=N -v days_ago=D -f history_fill.sql): :n ended workflows of a
-- type 'old' (5 completed executions and 1 event each) that ended :days_ago
-- days ago (default 1), as housekeeping's move leaves them: in the history
-- tables, under their day's partition, counted in geneva.history_counts,
-- history_event_counts and geneva.workflow_counts. Written as the move writes (geneva.moving 'on':
-- the history guards let it), in one statement a table rather than through
-- the live tables: the rows are what geneva._move_to_history would insert.
\if :{?days_ago}
\else
\set days_ago 1
\endif
select geneva._history_partition((now() at time zone 'UTC')::date - :days_ago);
select set_config('geneva.moving', 'on', false);
select set_config('geneva.fill_start', (select coalesce(max(id), 1000000000) + 1 from geneva.workflows_history)::text, false);
insert into geneva.workflows_history (id, workflow_type, hero_type, hero_id, state, allow_multiple, created_at, updated_at,
  started_at, transitioned_at, finished_at, children, children_ended, ended_on)
select g, 'old', 'User', 'u' || g, 'finished', false, e - interval '1 hour', e, e - interval '1 hour', e, e, 0, 0, e::date
from generate_series(current_setting('geneva.fill_start')::bigint, current_setting('geneva.fill_start')::bigint + :n - 1) g,
  lateral (select (date_trunc('day', now() at time zone 'UTC') - :days_ago * interval '1 day' + interval '12 hours') e) t;
insert into geneva.step_executions_history (id, workflow_id, step_name, attempt, scheduled_for, started_at, created_at, state,
  outcome, completed_at, finished_at, updated_at, metadata, ended_on)
select g::bigint * 10 + o, g, s, 1, e, e, e, 'completed', 'success', e, e, e, '{}', e::date
from generate_series(current_setting('geneva.fill_start')::bigint, current_setting('geneva.fill_start')::bigint + :n - 1) g,
  unnest(array['a', 'b', 'c', 'd', 'e']) with ordinality x (s, o),
  lateral (select (date_trunc('day', now() at time zone 'UTC') - :days_ago * interval '1 day' + interval '12 hours') e) t;
insert into geneva.events_history (id, workflow_id, name, payload, sent_at, sent_by, ended_on)
select g, g, 'paid', '{}', e, 'bench', e::date
from generate_series(current_setting('geneva.fill_start')::bigint, current_setting('geneva.fill_start')::bigint + :n - 1) g,
  lateral (select (date_trunc('day', now() at time zone 'UTC') - :days_ago * interval '1 day' + interval '12 hours') e) t;
insert into geneva.history_counts as c (ended_on, workflow_type, state, workflows, step_executions)
values ((now() at time zone 'UTC')::date - :days_ago, 'old', 'finished', :n, 5 * :n)
on conflict (ended_on, workflow_type, state) do update
set workflows = c.workflows + excluded.workflows, step_executions = c.step_executions + excluded.step_executions;
-- (and their events in geneva.history_event_counts, for geneva.event_stats)
insert into geneva.history_event_counts as c (ended_on, workflow_type, event, sent, consumed, last_sent_at)
values ((now() at time zone 'UTC')::date - :days_ago, 'old', 'paid', :n, 0,
  date_trunc('day', now() at time zone 'UTC') - :days_ago * interval '1 day' + interval '12 hours')
on conflict (ended_on, workflow_type, event) do update
set sent = c.sent + excluded.sent, last_sent_at = greatest(c.last_sent_at, excluded.last_sent_at);
-- (workflow_counts counts them, as it counted them before they moved)
select set_config('geneva.folding', 'on', false);
insert into geneva.ended_workflow_count_deltas (workflow_type, state, delta) values ('old', 'finished', :n);
select set_config('geneva.folding', '', false);
select set_config('geneva.moving', '', false);
vacuum analyze geneva.workflows_history, geneva.step_executions_history, geneva.events_history;
