-- geneva.step_throughput: step executions that ended in each minute of the
-- last hour, by outcome.
--
-- For the dashboard's chart. Reads step_executions_finished_at for the
-- window.
create or replace view geneva.step_throughput as
select
  date_trunc('minute', e.finished_at) as minute,
  e.outcome,
  count(*) as executions
from geneva.step_executions e
where e.finished_at >= date_trunc('minute', geneva.now()) - interval '59 minutes'
group by 1, 2;

comment on view geneva.step_throughput is
'Step executions ended per minute over the last hour, by outcome.';
