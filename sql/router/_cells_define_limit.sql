-- geneva._cells_define_limit: every cell's geneva.define_limit, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell once, a row each (define_limit returns nothing).
-- p_actor is set as the cell's geneva.actor for the call
-- (geneva._router_actor).
--
-- Called by: the router's define_limit.
-- Raises: what the cells' geneva.define_limit raises.
create or replace function geneva._cells_define_limit(
  p_name text,
  p_concurrency integer,
  p_rate integer,
  p_per interval,
  p_by text,
  p_actor text
)
returns setof integer
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select 1
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v)
  cross join lateral geneva.define_limit(
    p_name operator(pg_catalog.||) pg_catalog.left(a.v, 0), p_concurrency, p_rate, p_per, p_by
  ) r;
$$;
