-- geneva.step_errors: every step execution that ended with an error (its
-- error columns set: failed, reattempted or skipped by an exception), with
-- whether it is its workflow's latest such execution.
--
-- For the workflow filter "workflows whose latest error is of class X"
-- (geneva._workflow_filter's error_class: filter on error_class_name and
-- latest) and for the last error of a page of workflows (geneva.list_workflows:
-- filter on workflow_id). Reads step_executions_error_class_name for the
-- first, step_executions_workflow_id for the second.
create or replace view geneva.step_errors as
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
    from geneva.step_executions later
    where later.workflow_id = e.workflow_id
      and later.id > e.id
      and later.error_class_name is not null
  ) as latest
from geneva.step_executions e
where e.error_class_name is not null;

comment on view geneva.step_errors is
'Step executions that ended with an error, and whether each is its workflow''s latest one.';
