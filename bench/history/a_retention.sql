-- Design A's retention of yesterday (1M workflows, 5M executions, 1M
-- events): detach each table's partition (the referencing ones first), then
-- drop them. (The first try, detaching all three then dropping, failed:
-- the detached referencing tables keep their foreign keys.)
\set ON_ERROR_STOP on
\timing on
select to_char(current_date - 1, 'YYYYMMDD') as d \gset
alter table pa.events detach partition pa.events_:d;
alter table pa.step_executions detach partition pa.step_executions_:d;
-- (a detached partition keeps its foreign key to pa.workflows: it must go,
-- or lose its key, before the workflows' partition can leave)
drop table pa.events_:d, pa.step_executions_:d;
alter table pa.workflows detach partition pa.workflows_:d;
drop table pa.workflows_:d;
