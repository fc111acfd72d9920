-- Geneva 005: an index for the dashboard's workflow list filtered by error
-- class.
--
-- "Workflows whose latest error is of class X" starts from the executions
-- that carry that class (geneva.step_errors), not from the workflows.

create index step_executions_error_class_name on geneva.step_executions (error_class_name, workflow_id)
where error_class_name is not null;
