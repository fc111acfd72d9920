-- geneva._validate_limit: checks a definition's "concurrency" ({"by",
-- "limit"}) or "rate_limit" ({"by", "limit", "per"}): `by` is group, hero,
-- type or parent; `limit` a positive integer; a rate limit's `per` an interval (or
-- seconds) above zero, without months or years (windows are fixed lengths).
--
-- Called by: geneva.define_workflow. Takes no locks.
-- Raises: 22023, naming p_where, for anything else.
create or replace function geneva._validate_limit(p_limit jsonb, p_rate boolean, p_where text)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_key text;
  v_per interval;
begin
  if jsonb_typeof(p_limit) <> 'object' then
    raise exception '%: must be an object with by and limit%', p_where, case when p_rate then ' and per' else '' end
      using errcode = '22023';
  end if;
  for v_key in select jsonb_object_keys(p_limit) loop
    if v_key not in ('by', 'limit') and not (p_rate and v_key = 'per') then
      raise exception '%: unknown key "%"', p_where, v_key
        using errcode = '22023',
              hint = case when p_rate then 'Keys are by, limit and per.' else 'Keys are by and limit.' end;
    end if;
  end loop;
  if jsonb_typeof(p_limit -> 'by') is distinct from 'string' or p_limit ->> 'by' not in ('group', 'hero', 'type', 'parent') then
    raise exception '%: by % is not group, hero, type or parent', p_where, coalesce((p_limit -> 'by')::text, 'missing')
      using errcode = '22023';
  end if;
  if jsonb_typeof(p_limit -> 'limit') is distinct from 'number'
    or (p_limit ->> 'limit')::numeric <> trunc((p_limit ->> 'limit')::numeric)
    or (p_limit ->> 'limit')::numeric not between 1 and 2147483647 then
    raise exception '%: limit % is not a positive integer', p_where, coalesce((p_limit -> 'limit')::text, 'missing')
      using errcode = '22023';
  end if;
  if p_rate then
    if not p_limit ? 'per' then
      raise exception '%: a rate limit needs per (its window: "1 minute")', p_where using errcode = '22023';
    end if;
    v_per := geneva._parse_wait(p_limit -> 'per', p_where || ': per');
    if v_per <= interval '0' or extract(month from v_per) <> 0 or extract(year from v_per) <> 0 then
      raise exception '%: per % must be above zero, in days, hours, minutes or seconds', p_where, v_per
        using errcode = '22023';
    end if;
  end if;
end;
$$;
