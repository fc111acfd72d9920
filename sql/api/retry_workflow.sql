-- geneva.retry_workflow: an operator reruns a workflow from a step, as a new
-- workflow: same type, hero, group, allow_multiple and trace context, with
-- retried_from naming the original, whose history stays as it is.
--
-- Its body is geneva._retry_workflow, which geneva.bulk_workflows calls too.
-- Called by: operators (any SQL client, goclient.RetryWorkflow, `geneva
-- retry`, the dashboard's "Retry from step…"), and geneva.bulk_workflows.
-- The original must be paused, finished or canceled. A paused one is
-- canceled first (its kept execution, if any, ends canceled/
-- canceled_externally), as geneva.cancel_workflow would, freeing its hero's
-- slot for the new run. The new workflow starts at p_from_step, scheduled
-- now (the step's own wait is not waited again; a step that awaits an event
-- waits for a new one: events stay with the workflow they were sent to),
-- with attempt 1 and no cursor. By default the step is the one that would
-- run next: for a workflow paused or canceled, its next_step_name (the step
-- that failed, for one paused or canceled by an error); for a finished one,
-- the first step. A child's new run is a child of the same parent
-- (docs/children.md): counted on it (children, a stripe) whether the parent
-- has ended or not, without the original's child key (a step that runs again
-- does not start it twice: the original holds the key) and with no children
-- of its own.
--
-- Locks: the original's workflow row, then its active execution; for a
-- child, then its parent's row and a stripe (geneva._children_count), in a
-- child's end's order. Records the action (geneva._log_action) on the
-- original.
-- Returns the new workflow's id.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- ready or performing workflow; WF001 when its type is no longer defined;
-- 22023 for a step the type's definition does not have (or a type without
-- steps); 23505 (constraint workflows_one_ongoing_per_hero) when the hero has
-- another ongoing workflow of the type (the original ended, and another was
-- created since). Nothing is written on any error.
create or replace function geneva.retry_workflow(p_workflow_id bigint, p_from_step text default null)
returns bigint
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select * from geneva._retry_workflow(p_workflow_id, p_from_step, null);
$$;

comment on function geneva.retry_workflow(bigint, text) is
'Reruns a paused or ended workflow from a step (by default the one that would run next) as a new workflow with retried_from; a paused original is canceled.';
