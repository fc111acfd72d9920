-- geneva._events_all: every event kept, live and moved into history with
-- its workflow (docs/history.md): geneva.events' rows with ended_on
-- 'infinity', then geneva.events_history's with the day their workflow
-- ended. The same columns as geneva.events, in its order, then ended_on.
-- See geneva._workflows_all for the pruning.
--
-- Called by: the views that read across history (geneva.workflow_timeline;
-- geneva.event_stats reads history's events folded, not here). Granted to
-- no one.
create or replace view geneva._events_all as
select x.*, 'infinity'::date as ended_on
from geneva.events x
union all
select h.*
from geneva.events_history h;

comment on view geneva._events_all is
'Every event kept, live (ended_on infinity) and in history (ended_on the day its workflow ended).';
