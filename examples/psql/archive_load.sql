-- examples/psql/archive_load.sql: loads a file of `geneva archive` (JSON
-- lines, docs/history.md "Archive") into a database for inspection. Any
-- PostgreSQL will do, Geneva's schema is not needed; run it once a file, the
-- file on standard input:
--
--   psql -X -d inspect -f examples/psql/archive_load.sql < workflows_2026-11-28.jsonl
--
-- tests/archive_partition_rows_test.go runs it on an archive of its own.
\set ON_ERROR_STOP on

-- 1. The lines, as they are: one jsonb a workflow. (CSV with a quote and a
-- delimiter no JSON text holds, so that COPY reads each line whole and
-- leaves its backslashes alone.)
create schema if not exists archive;
create table if not exists archive.lines (line jsonb not null);
\copy archive.lines (line) from pstdin with (format csv, quote e'\x01', delimiter e'\x02')

-- 2. Views that type them: the workflows, their executions, events and the
-- operators' actions (the columns you look at most; every column is in the
-- line).
create or replace view archive.workflows as
select w.*, (l.line ->> 'ended_on')::date as ended_on
from archive.lines l,
  jsonb_to_record(l.line -> 'workflow') as w(id bigint, workflow_type text, hero_type text, hero_id text,
    state text, group_name text, parent_id bigint, retried_from bigint, created_at timestamptz,
    started_at timestamptz, finished_at timestamptz, canceled_at timestamptz);

create or replace view archive.executions as
select x.*
from archive.lines l,
  jsonb_to_recordset(l.line -> 'executions') as x(id bigint, workflow_id bigint, step_name text, attempt integer,
    state text, outcome text, scheduled_for timestamptz, started_at timestamptz, finished_at timestamptz,
    error_class_name text, error_message text);

create or replace view archive.events as
select x.*
from archive.lines l,
  jsonb_to_recordset(l.line -> 'events') as x(id bigint, workflow_id bigint, name text, payload jsonb,
    sent_at timestamptz, sent_by text, consumed_by bigint);

create or replace view archive.actions as
select x.*
from archive.lines l,
  jsonb_to_recordset(l.line -> 'actions') as x(id bigint, at timestamptz, performed_by text, verb text,
    workflow_id bigint, arguments jsonb, result jsonb);

-- 3. Ask them anything: the workflows by type and state, the errors.
select workflow_type, state, count(*) as workflows
from archive.workflows
group by workflow_type, state
order by workflow_type, state;

select workflow_id, step_name, outcome, error_class_name, error_message
from archive.executions
where error_class_name is not null
order by id;
