-- geneva._backoff_wait: the wait of a reattempt policy with a backoff, before
-- the reattempt that follows p_count consecutive exception reattempts:
-- wait * backoff ^ p_count, at most max_wait (default one day).
--
-- Called by: geneva._exception_effect. Takes no locks. (The exponent stops growing at
-- 64: 100 ^ 64 times any interval still fits a double, and is far above any
-- max_wait.)
create or replace function geneva._backoff_wait(p_policy jsonb, p_count integer)
returns interval
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
  select make_interval(secs => least(
    extract(epoch from geneva._parse_wait(p_policy -> 'wait', 'policy'))
      * power((p_policy ->> 'backoff')::double precision, least(p_count, 64)),
    extract(epoch from
      case when p_policy ? 'max_wait' then geneva._parse_wait(p_policy -> 'max_wait', 'policy')
      else interval '1 day' end)
  ))
$$;
