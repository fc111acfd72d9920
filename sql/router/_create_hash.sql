-- geneva._create_hash(hero_type, hero_id, parent_id): the hash that picks a
-- new workflow's partition, on the router (docs/cells.md).
--
-- A child's parent id (a child is created in its parent's cell: its
-- partition is the parent's, id & (P - 1)), else its hero's hash
-- (geneva._hero_hash).
--
-- Called by: the router's create_workflow (RUN ON).
-- It has no `set search_path`, so that the planner can inline it: every name
-- is qualified.
create or replace function geneva._create_hash(p_hero_type text, p_hero_id text, p_parent_id bigint)
returns bigint
language sql
immutable
parallel safe
as $$
  select coalesce(p_parent_id, geneva._hero_hash(p_hero_type, p_hero_id)::bigint)
$$;
