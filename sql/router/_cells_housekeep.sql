-- geneva._cells_housekeep: every cell's geneva.housekeep, on the router
-- (docs/cells.md).
--
-- RUN ON ALL: a round in each cell, in parallel, each returning its
-- result; p_actor is set as the cell's geneva.actor for the call
-- (geneva._router_actor), before the round runs.
--
-- Called by: the router's housekeep.
-- Raises: what the cells' geneva.housekeep raises.
create or replace function geneva._cells_housekeep(
  p_retention interval,
  p_stuck_in_progress_after interval,
  p_stuck_scheduled_after interval,
  p_recovery_action text,
  p_batch_size integer,
  p_keep_forever boolean,
  p_actor text
)
returns setof jsonb
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select geneva.housekeep(
    p_retention, p_stuck_in_progress_after, p_stuck_scheduled_after,
    p_recovery_action operator(pg_catalog.||) pg_catalog.left(a.v, 0), p_batch_size, p_keep_forever
  )
  from pg_catalog.set_config('geneva.actor', p_actor, true) a(v);
$$;
