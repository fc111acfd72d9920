-- geneva.define_limit: the cells' geneva.define_limit, on the router
-- (docs/cells.md).
--
-- Defines the limit in every cell (geneva._cells_define_limit, RUN ON ALL):
-- each cell counts its own (a limit keyed by hero holds across cells, a
-- type-wide or group-keyed one admits its bound in each cell). Each cell's
-- is its own transaction: a cell that refuses raises, the cells that took
-- it keep it (defining again is idempotent). The caller's name goes into
-- the cells' action log as "actor" (geneva._router_actor).
--
-- Called by: operators through the router.
-- Raises: what the cells' geneva.define_limit raises.
create or replace function geneva.define_limit(
  p_name text,
  p_concurrency integer default null,
  p_rate integer default null,
  p_per interval default null,
  p_by text default 'none'
)
returns void
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select from geneva._cells_define_limit(p_name, p_concurrency, p_rate, p_per, p_by, geneva._router_actor())
$$;

comment on function geneva.define_limit(text, integer, integer, interval, text) is
'The cells'' geneva.define_limit, in every cell (each counts its own).';
