-- geneva._partial_join: whether a definition has a join that waits for
-- fewer than all its children ("await": {"children": "any" | N}), whose
-- every child's end, not only a stripe's last, may make it due: the flag
-- geneva.children_stripes keeps beside each stripe.
--
-- Called by: geneva._children_count (a creation's new stripes),
-- geneva.define_workflow (the type's ongoing parents' stripes).
-- Takes no locks.
create or replace function geneva._partial_join(p_definition jsonb)
returns boolean
language sql
immutable
parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select exists (
    select
    from jsonb_array_elements(p_definition -> 'steps') st (step)
    where st.step -> 'await' ? 'children'
      and st.step -> 'await' -> 'children' <> '"all"'::jsonb
  );
$$;
