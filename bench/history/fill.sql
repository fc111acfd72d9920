-- :n ended workflows (5 executions, 1 event each), ended yesterday, into
-- :'target': pa (A's tables, their day partition), pb (B's live tables: today's
-- layout), pbh (B's history tables).
\set ON_ERROR_STOP on
select case :'target' when 'pa' then 'pa.workflows' when 'pb' then 'pb.workflows' else 'pb.workflows_history' end as w,
  case :'target' when 'pa' then 'pa.step_executions' when 'pb' then 'pb.step_executions' else 'pb.step_executions_history' end as e,
  case :'target' when 'pa' then 'pa.events' when 'pb' then 'pb.events' else 'pb.events_history' end as v,
  case :'target' when 'pb' then '' else 'ended_on, ' end as k,
  case :'target' when 'pb' then '' else '(current_date - 1), ' end as kv \gset
-- (the foreign keys not checked row by row: the rows are consistent by construction)
set session_replication_role = replica;
\timing on
insert into :w (:k id, workflow_type, hero_type, hero_id, state, created_at, updated_at, transitioned_at, finished_at)
select :kv g, 'old', 'User', 'u' || g, 'finished', now() - interval '1 day 1 hour', now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
from generate_series(1000000001, 1000000000 + :n) g;
insert into :e (:k id, workflow_id, step_name, attempt, scheduled_for, started_at, created_at, state, outcome, finished_at, updated_at)
select :kv g::bigint * 10 + o, g, s, 1, now() - interval '1 day', now() - interval '1 day', now() - interval '1 day', 'completed', 'success', now() - interval '1 day', now() - interval '1 day'
from generate_series(1000000001, 1000000000 + :n) g, unnest(array['a', 'b', 'c', 'd', 'e']) with ordinality x (s, o);
insert into :v (:k id, workflow_id, name, payload, sent_at)
select :kv g, g, 'approved', '{"by": "x"}', now() - interval '1 day'
from generate_series(1000000001, 1000000000 + :n) g;
vacuum analyze;
