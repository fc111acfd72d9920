-- geneva._limited: whether an execution of the step is held to any limit
-- (the type's "concurrency" or "rate_limit", the step's "limits"), so that
-- the claim checks them (geneva._limit_admit) and the step is never started
-- inline, past the check.
--
-- Called by: geneva.start_steps, geneva._advance_many. Like geneva.now() it
-- has no `set search_path`: it names nothing, and the planner inlines it.
create or replace function geneva._limited(p_definition jsonb, p_step_names text[], p_step_name text)
returns boolean
language sql
immutable
parallel safe
as $$
  select p_definition ? 'concurrency' or p_definition ? 'rate_limit'
    or coalesce(p_definition -> 'steps' -> (array_position(p_step_names, p_step_name) - 1) ? 'limits', false)
$$;
