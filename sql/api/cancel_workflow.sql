-- geneva.cancel_workflow: an operator cancels a workflow, freeing its hero's
-- slot.
--
-- Its body is geneva._cancel_workflow, which geneva.bulk_workflows calls too.
-- Called by: operators and applications (any SQL client, goclient, the CLI).
-- A ready or paused workflow is canceled now, with its active execution
-- (canceled/canceled_externally). A performing workflow is canceled at the
-- step boundary: the request is recorded (replacing a requested pause), the
-- running step's own result is recorded when it ends, and then the workflow
-- is canceled, even when that step was its last, and the execution that
-- would have come next is created canceled (canceled_externally). Requesting
-- it again is harmless.
--
-- Locks: the workflow row, then its active execution. Records the action
-- (geneva._log_action).
-- Returns the workflow row after the call.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- finished or canceled workflow.
create or replace function geneva.cancel_workflow(p_workflow_id bigint)
returns geneva.workflows
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  -- (its children's ends as they are now: geneva._workflow_now)
  select n.* from geneva._cancel_workflow(p_workflow_id, null) w cross join lateral geneva._workflow_now(w) n;
$$;

comment on function geneva.cancel_workflow(bigint) is
'Cancels a workflow now (ready, paused) or at the end of its running step (performing); frees the hero''s slot.';
