-- geneva.event_stats: the cells' geneva.event_stats, merged, on the router
-- (docs/cells.md): added up by type and event, the last sent the latest of the cells'.
--
-- The cells' columns, so that goclient, the dashboard and monitoring read
-- the router unchanged (each cell's events sent, consumed and pending per type and event: geneva.cells_event_stats, RUN ON ALL).
create or replace view geneva.event_stats as
select c.workflow_type, c.event, sum(c.sent)::bigint as sent, sum(c.consumed)::bigint as consumed,
  sum(c.pending)::bigint as pending, max(c.last_sent_at) as last_sent_at
from geneva.cells_event_stats() c
group by c.workflow_type, c.event;

comment on view geneva.event_stats is 'The cells'' geneva.event_stats, merged.';
