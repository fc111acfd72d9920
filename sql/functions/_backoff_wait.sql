-- geneva._backoff_wait: the wait of a reattempt policy with a backoff, before
-- the reattempt that follows p_count consecutive exception reattempts:
-- wait * backoff ^ p_count, at most max_wait (default one day).
--
-- Called by: geneva.fail_step. Takes no locks.
create or replace function geneva._backoff_wait(p_policy jsonb, p_count integer)
returns interval
language sql
immutable
set search_path = ''
as $$
  select make_interval(secs => least(
    extract(epoch from coalesce(geneva._parse_wait(p_policy -> 'wait', 'policy'), interval '0'))
      * power((p_policy ->> 'backoff')::double precision, least(p_count, 1000)),
    extract(epoch from coalesce(geneva._parse_wait(p_policy -> 'max_wait', 'policy'), interval '1 day'))
  ))
$$;
