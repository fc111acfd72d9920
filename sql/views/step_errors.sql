-- geneva.step_errors: every step execution that ended with an error (its
-- error columns set: failed, reattempted or skipped by an exception), with
-- whether it is its workflow's latest such execution; live, and moved into
-- history with its workflow (docs/history.md): geneva._step_errors without
-- its ended_on.
--
-- For the workflow filter "workflows whose latest error is of class X"
-- (geneva._workflow_filter's error_class: filter on error_class_name and
-- latest) and for the last error of a page of workflows (geneva.list_workflows:
-- filter on workflow_id). Reads step_executions_error_class_name for the
-- first, step_executions_workflow_id for the second, and the same indexes
-- of each history partition.
create or replace view geneva.step_errors as
select
  e.execution_id,
  e.workflow_id,
  e.step_name,
  e.state,
  e.outcome,
  e.error_class_name,
  e.error_message,
  e.finished_at,
  e.latest
from geneva._step_errors e;

comment on view geneva.step_errors is
'Step executions that ended with an error, and whether each is its workflow''s latest one.';
