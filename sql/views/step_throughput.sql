-- geneva.step_throughput: step executions that ended in each minute of the
-- last hour (the current minute and the 59 before it), by outcome.
--
-- For the dashboard's chart. Reads the counts kept as executions end
-- (migrations/001_create_schema.sql): the minutes housekeeping has folded
-- (ended_executions_by_minute) and the deltas it has not yet
-- (ended_execution_deltas), so that its cost does not follow how many ended.
create or replace view geneva.step_throughput as
select c.minute, c.outcome, sum(c.executions)::bigint as executions
from (
  select m.minute, m.outcome, m.executions
  from geneva.ended_executions_by_minute m
  where m.minute >= date_trunc('minute', geneva.now(), 'UTC') - interval '59 minutes'
  union all
  select d.minute, d.outcome, d.executions
  from geneva.ended_execution_deltas d
  where d.minute >= date_trunc('minute', geneva.now(), 'UTC') - interval '59 minutes'
) c
group by 1, 2;

comment on view geneva.step_throughput is
'Step executions ended per minute over the last hour, by outcome.';
