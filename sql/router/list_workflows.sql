-- geneva.list_workflows: the cells' workflows a filter matches, merged, on
-- the router (docs/cells.md).
--
-- Each cell returns its page (geneva._cells_list_workflows, RUN ON ALL); the
-- merge keeps the p_limit highest ids. Pages go by id as in one database
-- (the filter's before_id): every cell applies it, so the merged pages
-- neither skip nor repeat a workflow. Ids of different cells are not in
-- creation order: "newest first" holds within a cell.
--
-- Called by: applications, operators, dashboards through the router.
-- Raises: what the cells' geneva.list_workflows raises.
create or replace function geneva.list_workflows(
  p_filter jsonb default '{}',
  p_limit integer default 100
)
returns table (
  id bigint,
  workflow_type text,
  hero_type text,
  hero_id text,
  state text,
  current_step_name text,
  next_step_name text,
  allow_multiple boolean,
  requested_action text,
  created_at timestamptz,
  updated_at timestamptz,
  started_at timestamptz,
  transitioned_at timestamptz,
  paused_at timestamptz,
  finished_at timestamptz,
  canceled_at timestamptz,
  group_name text,
  retried_from bigint,
  definition_version integer,
  started_version integer,
  parent_id bigint,
  root_id bigint,
  children integer,
  children_ended integer,
  last_error_class text,
  last_error_message text,
  last_error_step text,
  last_error_at timestamptz
)
language sql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
  select c.*
  from geneva._cells_list_workflows(p_filter, p_limit) c
  order by c.id desc
  limit p_limit
$$;

comment on function geneva.list_workflows(jsonb, integer) is
'The cells'' workflows the filter matches, merged: the highest ids first; paged by the filter''s before_id.';
