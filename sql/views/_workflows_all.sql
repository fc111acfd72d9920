-- geneva._workflows_all: every workflow, live and moved into history
-- (docs/history.md): geneva.workflows' rows with ended_on 'infinity', then
-- geneva.workflows_history's with the day each ended. The same columns as
-- geneva.workflows, in its order, then ended_on: a row of it assigned to a
-- geneva.workflows variable in PL/pgSQL drops ended_on.
--
-- A workflow is in one branch or the other in any one snapshot: the move
-- inserts into history and deletes from the live table in one transaction.
-- A condition on ended_on prunes: ended_on = 'infinity' reads the live table
-- only (no partition holds it), a day reads that day's partition, and a
-- join on (id, ended_on) prunes each probe to one partition at run time.
--
-- Called by: geneva._workflow_filter (geneva.list_workflows,
-- geneva.count_workflows, geneva.bulk_workflows) and the views that read
-- across history (geneva.workflow_children, workflow_timeline,
-- event_stats; geneva.workflow_list has its two branches of its own, the
-- live one with final_step_at). Granted to no one.
create or replace view geneva._workflows_all as
select w.*, 'infinity'::date as ended_on
from geneva.workflows w
union all
select h.*
from geneva.workflows_history h;

comment on view geneva._workflows_all is
'Every workflow, live (ended_on infinity) and in history (ended_on the day it ended).';
