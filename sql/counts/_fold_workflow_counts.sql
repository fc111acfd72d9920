-- geneva._fold_workflow_counts: folds the deltas the count triggers appended
-- (geneva.ended_workflow_count_deltas) into geneva.ended_workflow_counts, so
-- that geneva.workflow_counts sums a few rows. Deltas of transactions not yet
-- committed are left for the next fold.
--
-- Called by: geneva.housekeep, every round.
-- Returns the deltas folded.
create or replace function geneva._fold_workflow_counts()
returns integer
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_folded integer;
begin
  -- the only writer of the counts (sql/guards/counts_guard.sql)
  perform pg_catalog.set_config('geneva.folding', 'on', true);
  with moved as (
    delete from geneva.ended_workflow_count_deltas d
    returning d.workflow_type, d.state, d.delta
  ),
  summed as (
    select m.workflow_type, m.state, sum(m.delta) as delta, count(*) as deltas
    from moved m
    group by m.workflow_type, m.state
  ),
  folded as (
    insert into geneva.ended_workflow_counts as c (workflow_type, state, workflows)
    select s.workflow_type, s.state, s.delta
    from summed s
    on conflict (workflow_type, state) do update set workflows = c.workflows + excluded.workflows
  )
  select coalesce(sum(s.deltas), 0) into v_folded from summed s;
  perform pg_catalog.set_config('geneva.folding', '', true);
  return v_folded;
end;
$$;
