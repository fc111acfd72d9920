-- Design B's retention of yesterday's history (1M workflows, 5M executions,
-- 1M events): detach (for an archive), then drop.
\set ON_ERROR_STOP on
\timing on
select to_char(current_date - 1, 'YYYYMMDD') as d \gset
alter table pb.events_history detach partition pb.events_history_:d;
alter table pb.step_executions_history detach partition pb.step_executions_history_:d;
alter table pb.workflows_history detach partition pb.workflows_history_:d;
drop table pb.events_history_:d, pb.step_executions_history_:d, pb.workflows_history_:d;
