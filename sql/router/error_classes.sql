-- geneva.error_classes: the error classes the cells' executions carry, on
-- the router (docs/cells.md).
--
-- The cells' own lists (geneva._cells_error_classes, RUN ON ALL: at most
-- p_limit a cell, each a loose scan of its indexes), merged: distinct, in
-- order, at most p_limit.
--
-- Called by: the web dashboard, operators through the router.
-- Raises: what the cells' geneva.error_classes raises.
create or replace function geneva.error_classes(p_limit integer default 100)
returns setof text
language sql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
  select distinct c.name
  from geneva._cells_error_classes(p_limit) c (name)
  order by c.name
  limit p_limit
$$;

comment on function geneva.error_classes(integer) is
'The error classes the cells'' executions carry, merged, distinct and in order, at most p_limit.';
