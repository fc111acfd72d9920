-- geneva._job_waits: whether a River job in state p_state still waits to
-- run: available, scheduled or retryable. The one list of it, for the
-- functions that ask whether an execution's job will still come (resume,
-- recovery) and that cancel a job no longer wanted (ending an execution).
--
-- A pending job is not waiting: River leaves pending jobs alone until
-- something outside it makes them available, and Geneva never inserts one,
-- so a pending job of Geneva's was parked by hand and will not run by
-- itself; resume gives its execution a new job (a job delivered twice
-- changes nothing).
--
-- Called by: _ensure_job, _recover_execution, _end_execution, with the
-- job's state as text (compared as River's enum, the planner prefers River's
-- fetch index to the primary key).
-- It has no `set search_path` and is not a security definer: it names
-- nothing, and without either the planner inlines it into the caller's
-- query.
create or replace function geneva._job_waits(p_state text)
returns boolean
language sql
immutable
parallel safe
as $$
  select p_state in ('available', 'scheduled', 'retryable')
$$;
