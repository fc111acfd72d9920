-- geneva.pause_workflow: an operator pauses a workflow.
--
-- Its body is geneva._pause_workflow, which geneva.bulk_workflows calls too.
-- Called by: operators and applications (any SQL client, goclient, the CLI).
-- A ready workflow pauses now and keeps its scheduled execution (it becomes
-- overdue while paused; resume enqueues it again). A performing workflow
-- pauses at the step boundary: the request is recorded, the running step's own
-- result is recorded when it ends, and then the workflow pauses with the next
-- execution kept scheduled (or finishes, when nothing is left to run).
-- Requesting it again is harmless.
--
-- A slot of a limit passed to a ready workflow's kept execution is given to
-- the next execution waiting for it.
--
-- Locks: the workflow row, then (ready) its active execution. Records the
-- action (geneva._log_action).
-- Returns the workflow row after the call.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- workflow that is paused, finished or canceled, or performing with a cancel
-- already requested.
create or replace function geneva.pause_workflow(p_workflow_id bigint)
returns geneva.workflows
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  -- (its children's ends as they are now: geneva._workflow_now)
  select n.* from geneva._pause_workflow(p_workflow_id, null) w cross join lateral geneva._workflow_now(w) n;
$$;

comment on function geneva.pause_workflow(bigint) is
'Pauses a workflow now (ready) or at the end of its running step (performing).';
