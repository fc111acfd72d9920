-- geneva.skip_step: an operator skips the step that would run next.
--
-- Its body is geneva._skip_step, which geneva.bulk_workflows calls too.
-- Called by: operators and applications (any SQL client, goclient, the CLI).
-- On a ready or paused workflow: the scheduled execution, if there is one, is
-- skipped (skipped/skipped_externally); the step after it (after
-- next_step_name when there is none, as for a workflow paused by an error) is
-- scheduled after its own wait, or the workflow finishes. The workflow is
-- ready afterwards.
--
-- Locks: the workflow row, then its active execution. Records the action
-- (geneva._log_action).
-- Returns the workflow row after the call.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- performing, finished or canceled workflow.
create or replace function geneva.skip_step(p_workflow_id bigint)
returns geneva.workflows
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  -- (its children's ends as they are now: geneva._workflow_now)
  select n.* from geneva._skip_step(p_workflow_id, null) w cross join lateral geneva._workflow_now(w) n;
$$;

comment on function geneva.skip_step(bigint) is
'Skips the step that would run next of a ready or paused workflow and schedules the one after it.';
