-- geneva._cells_bulk_workflows: every cell's geneva.bulk_workflows, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: a result a cell, each committed in its cell; the router's
-- geneva.bulk_workflows merges them. p_actor is set as the cell's
-- geneva.actor for the call (geneva._router_actor), before the verb runs.
--
-- Called by: the router's bulk_workflows.
-- Raises: what the cells' geneva.bulk_workflows raises.
create or replace function geneva._cells_bulk_workflows(
  p_verb text,
  p_filter jsonb,
  p_limit integer,
  p_actor text
)
returns setof jsonb
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select r
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v)
  cross join lateral geneva.bulk_workflows(p_verb operator(pg_catalog.||) pg_catalog.left(a.v, 0), p_filter, p_limit) r;
$$;
