-- geneva._step_job_available: whether the River job of a step execution due
-- after p_delay is inserted available rather than scheduled. As River does
-- for its own short snoozes, a job due within River's scheduler interval (5
-- seconds) is inserted available with its future time, for the producers'
-- next fetch after it; a later one is inserted scheduled, and River's
-- scheduler makes it available when due.
--
-- Called by: geneva._enqueue_step, geneva._advance_many. Like geneva.now()
-- it has no `set search_path`: it names nothing, and without the setting the
-- planner inlines it into the caller's statement.
create or replace function geneva._step_job_available(p_delay interval)
returns boolean
language sql
immutable
parallel safe
as $$
  select p_delay <= interval '5 seconds'
$$;
