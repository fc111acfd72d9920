-- geneva._histogram_add: the sum of two duration histograms (arrays of
-- geneva.duration_bucket in order: the seconds a bucket stands for, see
-- geneva._duration_bucket, and its count), as one, in order.
--
-- Called by: geneva._fold_ended_executions, adding a fold's counts to an
-- hour's.
create or replace function geneva._histogram_add(p_a geneva.duration_bucket[], p_b geneva.duration_bucket[])
returns geneva.duration_bucket[]
language sql
immutable
parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select coalesce(array_agg((s.seconds, s.executions)::geneva.duration_bucket order by s.seconds), '{}')
  from (
    select h.seconds, sum(h.executions)::bigint as executions
    from (
      select a.seconds, a.executions from unnest(p_a) a
      union all
      select b.seconds, b.executions from unnest(p_b) b
    ) h
    group by h.seconds
  ) s
$$;
