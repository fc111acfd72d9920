-- geneva._start_children: creates the children that running steps start
-- with their success (Go's step.StartChildren, an HTTP step's reply's
-- "children"), in the transaction that records their ends: a step that
-- fails, is reattempted or is given back starts none, and its children
-- start exactly when its success is recorded.
--
-- p_parent_ids and p_children are parallel: each element a parent (the
-- workflow whose step succeeded) and its step's children, a JSON list of
-- objects of type, hero_type and hero_id (strings, required), group and key
-- (strings or null). A child's key is unique among its parent's children
-- (workflows.child_key); its default is its type and hero, the JSON list
-- [type, hero_type, hero_id] as text. A key the parent's children have
-- already is not created again (a step that runs again, a loop over the
-- same step), nor is a hero with an ongoing workflow of the child's type
-- (create_workflows' p_skip_ongoing): the step's end is recorded whatever
-- the children find. The children carry their parent's trace context.
--
-- Created set-wise by geneva.create_workflows (the one implementation of a
-- workflow's creation), one call per parent, type and hero type, in that
-- order.
--
-- Called by: geneva._end_running, with the parents' rows locked and their
-- steps' ends written, before the parents move on (so that a join that
-- follows counts them, and a parent whose last step starts them is still
-- ongoing).
-- Locks: as create_workflows (the parents' rows, held already).
-- Raises: 22023 for children that are not a list of such objects (a member
-- not named above, a value that is not a string), or for a type no
-- definition has; what create_workflows raises for a child (22023 an empty
-- hero type, hero id, group or key; 22001 one too long). Nothing is
-- created then, and the caller's ends are not recorded either.
create or replace function geneva._start_children(p_parent_ids bigint[], p_children jsonb[])
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_bad text;
  v_g record;
begin
  -- guard: each element a list of objects of the members above, strings
  select coalesce(
      case when jsonb_typeof(x.children) <> 'array' then 'children must be a list of objects, not ' || x.children::text end,
      (
        select case
            when jsonb_typeof(c) <> 'object' then 'a child must be an object, not ' || c::text
            when exists (select from jsonb_object_keys(c) k where k not in ('type', 'hero_type', 'hero_id', 'group', 'key'))
              then 'a child has only type, hero_type, hero_id, group and key: ' || c::text
            when jsonb_typeof(c -> 'type') is distinct from 'string' or jsonb_typeof(c -> 'hero_type') is distinct from 'string'
              or jsonb_typeof(c -> 'hero_id') is distinct from 'string'
              then 'a child''s type, hero_type and hero_id are strings: ' || c::text
            when jsonb_typeof(c -> 'group') not in ('string', 'null') or jsonb_typeof(c -> 'key') not in ('string', 'null')
              then 'a child''s group and key are strings or null: ' || c::text
            when not exists (select from geneva.workflow_definitions d where d.workflow_type = c ->> 'type')
              then 'unknown child workflow type ' || (c ->> 'type')
          end
        from jsonb_array_elements(case when jsonb_typeof(x.children) = 'array' then x.children end) c
        order by 1 nulls last
        limit 1
      )
    )
  into v_bad
  from unnest(p_parent_ids, p_children) as x (parent_id, children)
  where x.children is not null and x.children <> 'null'::jsonb
  order by 1 nulls last
  limit 1;
  if v_bad is not null then
    raise exception '%', left(v_bad, 1000)
      using errcode = '22023',
            hint = 'A step starts children as a list of {"type", "hero_type", "hero_id", "group", "key"}; the type must be defined.';
  end if;

  for v_g in
    select x.parent_id, c ->> 'type' as workflow_type, c ->> 'hero_type' as hero_type,
      array_agg(c ->> 'hero_id' order by x.ord, n.ord) as hero_ids,
      array_agg(c ->> 'group' order by x.ord, n.ord) as groups,
      array_agg(
        coalesce(c ->> 'key', jsonb_build_array(c -> 'type', c -> 'hero_type', c -> 'hero_id')::text)
        order by x.ord, n.ord
      ) as child_keys,
      min(w.trace_context) as trace_context
    from unnest(p_parent_ids, p_children) with ordinality as x (parent_id, children, ord)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(x.children) = 'array' then x.children end)
      with ordinality as n (c, ord)
    join geneva.workflows w on w.id = x.parent_id
    group by x.parent_id, c ->> 'type', c ->> 'hero_type'
    order by x.parent_id, c ->> 'type', c ->> 'hero_type'
  loop
    perform geneva.create_workflows(
      v_g.workflow_type, v_g.hero_type, v_g.hero_ids,
      p_trace_context => v_g.trace_context,
      p_groups => case when array_remove(v_g.groups, null) <> '{}' then v_g.groups end,
      p_parent_id => v_g.parent_id,
      p_skip_ongoing => true,
      p_child_keys => v_g.child_keys
    );
  end loop;
end;
$$;
