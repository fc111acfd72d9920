-- geneva.resume_workflow: an operator resumes a paused workflow.
--
-- Its body is geneva._resume_workflow, which geneva.bulk_workflows calls too.
-- Called by: operators and applications (any SQL client, goclient, the CLI).
-- The workflow becomes ready. The execution it kept while paused runs at its
-- time (at once when overdue), with a new River job unless one is still
-- waiting; without a kept execution (the workflow paused on an error, a pause
-- signal or a missing step), next_step_name is scheduled anew, now, as one
-- more attempt of it, continuing the cursor of a resumable step's latest
-- execution (an error that paused a long iteration does not start it over).
-- A step that awaits an event runs with the event its latest execution
-- consumed; when that one had none (a pause on its timeout,
-- paused_by_timeout), it waits for its event again, with a fresh timeout.
--
-- On a performing workflow with a pause requested (it is not paused yet: it
-- would pause when its step ends), resume withdraws the request: the
-- workflow stays performing with requested_action NULL, and its step's end
-- moves it on as if no pause had been asked for.
--
-- Locks: the workflow row, then its active execution. Records the action
-- (geneva._log_action).
-- Returns the workflow row after the call.
-- Raises: 22004 for a NULL id; P0002 for an unknown workflow; 55000 for a
-- workflow that is neither paused nor performing with a pause requested
-- (ready, finished, canceled; performing without a request or with a cancel
-- requested).
create or replace function geneva.resume_workflow(p_workflow_id bigint)
returns geneva.workflows
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  -- (its children's ends as they are now: geneva._workflow_now)
  select n.* from geneva._resume_workflow(p_workflow_id, null) w cross join lateral geneva._workflow_now(w) n;
$$;

comment on function geneva.resume_workflow(bigint) is
'Resumes a paused workflow: its kept execution runs (at once if overdue), or its next step is scheduled now; withdraws a pause requested of a performing one.';
