-- geneva._step_errors: geneva.step_errors with ended_on (geneva._workflows_all's:
-- 'infinity' for a live execution, the day its workflow ended for one moved
-- into history): every step execution that ended with an error, live or in
-- history (docs/history.md), with whether it is its workflow's latest such
-- execution. The latest is sought in the execution's own branch and
-- partition (its ended_on): a workflow's executions move together.
--
-- Called by: geneva.step_errors (without ended_on) and
-- geneva._workflow_filter (error_class, joined to geneva._workflows_all on
-- (workflow_id, ended_on): each probe pruned to one table or partition). Reads step_executions_error_class_name and
-- step_executions_history_error_class_name for a class,
-- step_executions_workflow_id and step_executions_history_workflow_id for
-- a workflow. Granted to no one.
create or replace view geneva._step_errors as
select
  e.id as execution_id,
  e.workflow_id,
  e.step_name,
  e.state,
  e.outcome,
  e.error_class_name,
  e.error_message,
  e.finished_at,
  not exists (
    select
    from geneva._step_executions_all later
    where later.workflow_id = e.workflow_id
      and later.ended_on = e.ended_on
      and later.id > e.id
      and later.error_class_name is not null
  ) as latest,
  e.ended_on
from geneva._step_executions_all e
where e.error_class_name is not null;

comment on view geneva._step_errors is
'geneva.step_errors, live and in history, with ended_on (infinity while live).';
