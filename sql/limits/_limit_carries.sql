-- geneva._limit_carries: whether the step is held to its type's
-- "concurrency" only (no "rate_limit", no named "limits" of its own): then
-- its execution's one slot is the same key for every step of the workflow,
-- and the next step may take over the slot of the step that ended before it
-- (started in the same job, the count unchanged), or wait for one straight
-- away, without a job, behind the key's waiters (geneva._limit_next,
-- geneva._advance_many), as a new workflow's first step may
-- (geneva._limit_wait_behind); and a waiter of such a step may be run next
-- by the worker whose step freed its slot (geneva._limit_release).
--
-- Called by: geneva._advance_many, geneva._limit_next, geneva._limit_release,
-- geneva._insert_execution, geneva.create_workflows. Like geneva._limited it
-- has no `set search_path`: it names nothing, and the planner inlines it.
create or replace function geneva._limit_carries(p_definition jsonb, p_step_names text[], p_step_name text)
returns boolean
language sql
immutable
parallel safe
as $$
  select p_definition ? 'concurrency' and not p_definition ? 'rate_limit'
    and not coalesce(p_definition -> 'steps' -> (array_position(p_step_names, p_step_name) - 1) ? 'limits', false)
$$;
