-- geneva._duration_bucket: the bucket of a duration in the histograms of the
-- ended executions' queue lag and run time (geneva.ended_execution_deltas,
-- geneva.ended_executions_by_hour), named by the seconds it stands for: 0
-- for a microsecond or less (a negative duration included), else the middle
-- of (1.02^(k-1), 1.02^k] microseconds, the bucket 2% wide that holds the
-- duration, from a microsecond to centuries.
-- The middle, 2 * 1.02^k / 2.02 microseconds, is within 1% of every duration
-- in its bucket, so percentiles read from the buckets (geneva.step_stats)
-- are within 1% of the exact ones. NULL for NULL (an execution that never
-- ran has neither duration).
--
-- Called by: geneva._end_executions and the trigger
-- step_executions_count_inserted, for each ended execution. Takes no locks.
-- An immutable expression that has no `set search_path` (every name in it is
-- pg_catalog's), so that the planner inlines it into the statement that
-- counts a batch's ends.
create or replace function geneva._duration_bucket(p_duration interval)
returns double precision
language sql
immutable
parallel safe
as $$
  select case
    when p_duration is null then null
    when p_duration <= interval '1 microsecond' then 0::double precision
    else 0.000001::double precision * 2 / 2.02 * pg_catalog.power(
      1.02::double precision,
      pg_catalog.ceil(
        pg_catalog.ln(pg_catalog.date_part('epoch', p_duration) * 1000000::double precision)
          / pg_catalog.ln(1.02::double precision)
      )
    )
  end
$$;
