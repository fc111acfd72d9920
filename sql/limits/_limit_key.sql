-- geneva._limit_key: the key a limit gives a workflow, a JSON array as text,
-- [kind, name, value]: kind concurrency or rate_limit (a type's own limit,
-- name the type) or limit (a named one); value the workflow's group (the
-- limit's "by": "group"; '' without one), its hero (hero type:id), its type,
-- its parent's id (by parent: the children of one parent share a key; a
-- workflow without a parent has no key, NULL: the limit does not hold it), or
-- '' (by none: one key for all). Written only here: geneva._limit_keys
-- builds every limit's key with it, and geneva._concurrency_key the key of a
-- type's concurrency a step's end may carry to the next step. (The views
-- geneva.limit_usage and geneva.workflow_blockers build a rate limit's key
-- inline, as this does: a view's readers may not execute a helper;
-- tests/workflow_blockers_test.go holds them to the same keys.)
--
-- Called by: geneva._limit_keys, geneva._concurrency_key. Takes no locks.
-- Like geneva.now() it has no `set search_path`, so that the planner can
-- inline it.
create or replace function geneva._limit_key(
  p_kind text,
  p_name text,
  p_by text,
  p_workflow_type text,
  p_group text,
  p_hero_type text,
  p_hero_id text,
  p_parent_id bigint
)
returns text
language sql
-- (stable, as jsonb_build_array is: a function declared more stable than
-- its body is not inlined)
stable
parallel safe
as $$
  select case when p_by operator(pg_catalog.<>) 'parent' or p_parent_id is not null then
    pg_catalog.jsonb_build_array(p_kind, p_name,
      case p_by
        when 'group' then coalesce(p_group, '')
        when 'hero' then p_hero_type || ':' || p_hero_id
        when 'type' then p_workflow_type
        when 'parent' then p_parent_id::text
        else ''
      end)::text
  end
$$;
