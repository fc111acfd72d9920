-- geneva.engine_metrics: the cells' geneva.engine_metrics, merged, on the
-- router (docs/cells.md).
--
-- The columns of the cells' view, so that promgeneva and `geneva metrics`
-- read the router unchanged: each cell's samples
-- (geneva.cells_engine_metrics, RUN ON ALL) merged by metric and labels,
-- queue_oldest_due_seconds and history_oldest_seconds the highest of the
-- cells', every other metric (a count) added up.
create or replace view geneva.engine_metrics as
select m.metric, m.workflow_type, m.step_name, m.label,
  case when m.metric in ('queue_oldest_due_seconds', 'history_oldest_seconds') then max(m.value) else sum(m.value) end as value
from geneva.cells_engine_metrics() m
group by m.metric, m.workflow_type, m.step_name, m.label;

comment on view geneva.engine_metrics is 'The engine''s state as metric samples, of every cell.';
