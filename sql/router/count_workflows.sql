-- geneva.count_workflows: the cells' count of the workflows a filter
-- matches, on the router (docs/cells.md).
--
-- The sum of the cells' counts (geneva._cells_count_workflows, RUN ON ALL)
-- and the highest of their newest ids.
--
-- Called by: applications, operators, dashboards through the router.
-- Raises: what the cells' geneva.count_workflows raises.
create or replace function geneva.count_workflows(p_filter jsonb default '{}')
returns table (
  workflows bigint,
  newest_id bigint
)
language sql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
  select coalesce(pg_catalog.sum(c.workflows), 0)::bigint, pg_catalog.max(c.newest_id)
  from geneva._cells_count_workflows(p_filter) c
$$;

comment on function geneva.count_workflows(jsonb) is
'The cells'' count of the workflows the filter matches, added up, and the highest newest id.';
