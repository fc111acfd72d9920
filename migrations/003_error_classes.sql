-- Geneva 003: every class of a failed step's error, not only the one recorded
-- in error_class_name.
--
-- error_classes lists the type names of the error's chain, the recorded class
-- (error_class_name: the most specific, looking through the standard
-- library's anonymous wrappers such as fmt.Errorf's %w and errors.Join) first,
-- then the others in chain order, each once; so an operator can ask
-- `'*net.OpError' = any(error_classes)` whatever wrapped it. Written by
-- geneva.fail_step with the other error columns.

alter table geneva.step_executions add column error_classes text [];

-- Executions failed before this migration: the classes fail_step recorded in
-- their metadata.
update geneva.step_executions
set error_classes = array(select jsonb_array_elements_text(metadata -> 'error_classes'))
where metadata ? 'error_classes' and jsonb_typeof(metadata -> 'error_classes') = 'array';
