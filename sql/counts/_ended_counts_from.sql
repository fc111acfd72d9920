-- geneva._ended_counts_from: the oldest time the counts of ended executions
-- keep: the start of the hour 26 hours ago, by UTC hours.
-- geneva.step_stats reads from the start of the hour 24 hours ago, and two
-- more hours let a fold run late. Executions that ended before it are not
-- counted (history imported already ended, mostly) and folded counts older
-- than it are dropped.
--
-- Called by: the WHEN clause of the trigger step_executions_count_inserted,
-- and geneva._fold_ended_executions.
create or replace function geneva._ended_counts_from()
returns timestamptz
language sql
stable
parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select date_trunc('hour', geneva.now() - interval '26 hours', 'UTC')
$$;
