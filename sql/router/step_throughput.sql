-- geneva.step_throughput: the cells' geneva.step_throughput, merged, on the router
-- (docs/cells.md): added up by minute and outcome.
--
-- The cells' columns, so that goclient, the dashboard and monitoring read
-- the router unchanged (each cell's executions ended per minute and outcome: geneva.cells_step_throughput, RUN ON ALL).
create or replace view geneva.step_throughput as
select c.minute, c.outcome, sum(c.executions)::bigint as executions
from geneva.cells_step_throughput() c
group by c.minute, c.outcome;

comment on view geneva.step_throughput is 'The cells'' geneva.step_throughput, merged.';
