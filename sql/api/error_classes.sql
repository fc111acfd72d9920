-- geneva.error_classes: the error classes that executions carry (live and
-- in history, as geneva.step_errors reads them), distinct, in order, at
-- most p_limit: what the web dashboard offers in its error filter. One
-- index probe a class (a loose scan of the error class indexes), however
-- many executions carry each.
--
-- Called by: the web dashboard (package dashboard), operators; through a
-- cells' router, each cell's (geneva._cells_error_classes), so that the
-- router reads a few rows a cell, not every cell's whole view once a class.
-- Takes no locks.
-- Raises: 22004 for a NULL limit; 22023 for a limit under 1.
create or replace function geneva.error_classes(p_limit integer default 100)
returns setof text
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_limit is null then
    raise exception 'limit must not be null' using errcode = '22004';
  end if;
  if p_limit < 1 then
    raise exception 'limit must be at least 1, not %', p_limit using errcode = '22023';
  end if;
  return query
  with recursive classes as (
    (select e.error_class_name as name from geneva.step_errors e order by e.error_class_name limit 1)
    union all
    select (
      select e.error_class_name from geneva.step_errors e
      where e.error_class_name > c.name
      order by e.error_class_name
      limit 1
    )
    from classes c
    where c.name is not null
  )
  select c.name from classes c where c.name is not null limit p_limit;
end;
$$;

comment on function geneva.error_classes(integer) is
'The error classes that executions carry, distinct and in order, at most p_limit (the dashboard''s error filter).';
