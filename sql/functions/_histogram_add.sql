-- geneva._histogram_add: the sum of two duration histograms (the seconds a
-- bucket stands for -> count, see geneva._duration_bucket), as one.
--
-- Called by: geneva._fold_ended_executions, adding a fold's counts to an
-- hour's.
create or replace function geneva._histogram_add(p_a jsonb, p_b jsonb)
returns jsonb
language sql
immutable
parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select coalesce(jsonb_object_agg(s.bucket, s.executions), '{}')
  from (
    select h.bucket, sum(h.executions::bigint) as executions
    from (
      select a.key, a.value from jsonb_each_text(p_a) a
      union all
      select b.key, b.value from jsonb_each_text(p_b) b
    ) h(bucket, executions)
    group by h.bucket
  ) s
$$;
