-- geneva._step_wait: how long after p_from a step is due: the later of its
-- wait (counted from p_from, the end of the step before it) and its "after"
-- (counted from the workflow's created_at); at once (zero or less) when
-- both have passed. The one rule of a step's due time: written only here.
--
-- Called by: geneva._advance_many (the next step), geneva.create_workflows
-- (the first), geneva._final_step_at (each step still to come). Takes no
-- locks. Like geneva.now() it has no `set search_path`, so that the planner
-- inlines it into _advance_many's statement; it names only pg_catalog's
-- operators (greatest is SQL's, not a function). (Stable, as timestamptz's arithmetic is: a function declared
-- more stable than its body is not inlined.)
create or replace function geneva._step_wait(
  p_wait interval,
  p_after interval,
  p_created_at timestamptz,
  p_from timestamptz
)
returns interval
language sql
stable
parallel safe
as $$
  select greatest(p_wait, p_created_at operator(pg_catalog.+) p_after operator(pg_catalog.-) p_from)
$$;
