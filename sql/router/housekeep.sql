-- geneva.housekeep: a housekeeping round in every cell, on the router
-- (docs/cells.md).
--
-- Each cell runs its own round with the same arguments
-- (geneva._cells_housekeep, RUN ON ALL, in parallel; each logs its own
-- action, the router's caller as actor); the results merge: every count
-- added up, more while any cell has more (a boolean: true in any cell). A null argument takes each cell's
-- housekeeping settings (the same in every cell when set through the
-- router).
--
-- Called by: operators through the router (`geneva housekeep`).
-- Raises: what the cells' geneva.housekeep raises (a cell's round that
-- committed stays committed when another cell's raises).
create or replace function geneva.housekeep(
  p_retention interval default null,
  p_stuck_in_progress_after interval default null,
  p_stuck_scheduled_after interval default null,
  p_recovery_action text default null,
  p_batch_size integer default null,
  p_keep_forever boolean default false
)
returns jsonb
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select pg_catalog.jsonb_object_agg(k.key, k.value)
  from (
    select e.key,
      coalesce(
        pg_catalog.to_jsonb(pg_catalog.sum(case when pg_catalog.jsonb_typeof(e.value) = 'number' then e.value::numeric end)),
        pg_catalog.to_jsonb(pg_catalog.bool_or(case when pg_catalog.jsonb_typeof(e.value) = 'boolean' then e.value::boolean end)),
        pg_catalog.min(e.value::text)::jsonb
      ) as value
    from geneva._cells_housekeep(
      p_retention, p_stuck_in_progress_after, p_stuck_scheduled_after,
      p_recovery_action, p_batch_size, p_keep_forever, geneva._router_actor()
    ) r(result)
    cross join lateral pg_catalog.jsonb_each(r.result) e
    group by e.key
  ) k
$$;

comment on function geneva.housekeep(interval, interval, interval, text, integer, boolean) is
'A housekeeping round in every cell: the counts added up, more while a cell has more.';
