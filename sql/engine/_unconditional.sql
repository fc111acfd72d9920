-- geneva._unconditional: whether an execution of the step may start without
-- a worker evaluating anything first: its workflow type has no cancel_if,
-- and the step is defined (a step no longer defined is recorded by its claim,
-- step_not_defined) and has no skip_if. Only such a step is started by SQL
-- for a worker that did not claim it: the next step of an inline chain
-- (geneva._advance_many) or a waiter taking the slot a step freed
-- (geneva._limit_release).
--
-- Called by: geneva._advance_many, geneva._limit_release. Like
-- geneva._limited it has no `set search_path`: it names nothing, and the
-- planner inlines it.
create or replace function geneva._unconditional(p_definition jsonb, p_step_names text[], p_step_name text)
returns boolean
language sql
immutable
parallel safe
as $$
  select coalesce(p_definition -> 'cancel_if', '[]') = '[]'
    and array_position(p_step_names, p_step_name) is not null
    and not (p_definition -> 'steps' -> (array_position(p_step_names, p_step_name) - 1) ? 'skip_if')
$$;
