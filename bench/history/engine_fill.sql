-- Appended to dist/geneva.sql by engine_growth.sh: :n ended workflows of a
-- type 'old' (5 completed executions each), ended a day ago, in today's
-- live tables, the state housekeeping leaves within retention. Triggers off
-- (the rows are consistent by construction; the counts tables ignore them).
set session_replication_role = replica;
insert into geneva.workflows (id, workflow_type, hero_type, hero_id, state, created_at, updated_at, started_at, transitioned_at, finished_at)
select g, 'old', 'User', 'u' || g, 'finished', now() - interval '1 day 1 hour', now() - interval '1 day', now() - interval '1 day 1 hour', now() - interval '1 day', now() - interval '1 day'
from generate_series(1000000001, 1000000000 + :n) g;
insert into geneva.step_executions (id, workflow_id, step_name, attempt, scheduled_for, started_at, created_at, state, outcome, completed_at, finished_at, updated_at)
select g::bigint * 10 + o, g, s, 1, now() - interval '1 day', now() - interval '1 day', now() - interval '1 day', 'completed', 'success', now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
from generate_series(1000000001, 1000000000 + :n) g, unnest(array['a', 'b', 'c', 'd', 'e']) with ordinality x (s, o);
set session_replication_role = origin;
vacuum analyze geneva.workflows, geneva.step_executions;
