-- geneva._hero_hash(hero_type, hero_id): the hash that picks a hero's
-- partition, on the router (docs/cells.md).
--
-- hashtext(hero_type || ':' || hero_id); PL/Proxy takes its low bits (hash &
-- (P - 1)) as the partition, as the cell's _workflow_id does for the ids it
-- makes, so a hero's workflows live in one cell and their ids route back to
-- it.
--
-- Called by: the router's send_hero_event (RUN ON).
-- It has no `set search_path`, so that the planner can inline it: every name
-- is qualified.
create or replace function geneva._hero_hash(p_hero_type text, p_hero_id text)
returns integer
language sql
immutable
parallel safe
as $$
  select pg_catalog.hashtext(p_hero_type operator(pg_catalog.||) ':' operator(pg_catalog.||) p_hero_id)
$$;
