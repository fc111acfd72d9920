-- geneva._step_executions_all: every step execution, live and moved into
-- history with its workflow (docs/history.md): geneva.step_executions' rows
-- with ended_on 'infinity', then geneva.step_executions_history's with the
-- day their workflow ended. The same columns as geneva.step_executions, in
-- its order, then ended_on. Joined to geneva._workflows_all on
-- (workflow_id, ended_on), each execution meets its workflow in its own
-- branch and partition. See geneva._workflows_all for the pruning.
--
-- Called by: geneva.list_workflows (a page's latest errors, joined on
-- (workflow_id, ended_on)) and the views that read across history
-- (geneva._step_errors, workflow_timeline). Granted to no one.
create or replace view geneva._step_executions_all as
select e.*, 'infinity'::date as ended_on
from geneva.step_executions e
union all
select h.*
from geneva.step_executions_history h;

comment on view geneva._step_executions_all is
'Every step execution, live (ended_on infinity) and in history (ended_on the day its workflow ended).';
