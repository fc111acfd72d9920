-- geneva._check_children_await: validates a join's "children" (a step's
-- "await": {"children": "all" | "any" | N, "timeout", "on_timeout"}): the
-- rule is all (every child started so far has ended: due at once when there
-- is none), any (one has ended) or a positive whole number N (N have ended:
-- more than the parent has started waits for more, or for the timeout).
-- The timeout and on_timeout are checked as an event's await's.
--
-- Called by: geneva.define_workflow, for an await that names children.
-- Takes no locks.
-- Raises: 22023, naming p_where, for an await with both event and children,
-- or a rule that is none of the above.
create or replace function geneva._check_children_await(p_await jsonb, p_where text)
returns void
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_rule jsonb := p_await -> 'children';
begin
  if p_await ? 'event' then
    raise exception '%: await names an event or children, not both', p_where
      using errcode = '22023',
            hint = 'A step awaits one thing; a step before it can await the other.';
  end if;
  if not (
    v_rule in ('"all"'::jsonb, '"any"'::jsonb)
    or jsonb_typeof(v_rule) = 'number' and v_rule::text ~ '^[0-9]+$' and v_rule::numeric between 1 and 2147483647
  ) then
    raise exception '%: await children % is not all, any or a positive whole number', p_where, v_rule
      using errcode = '22023',
            hint = '"all": every child started so far has ended; "any": one has; N: N have.';
  end if;
end;
$$;
