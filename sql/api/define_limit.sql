-- geneva.define_limit: creates or replaces a named limit, shared by every
-- step that names it in its definition's "limits" (of any type): at most
-- p_concurrency of their executions in progress at once, and at most p_rate
-- starts per p_per, per key: p_by none (one key for all), group (each
-- workflow's group), hero, type or parent (the children of one parent; a
-- workflow without a parent is not held).
--
-- Called by: operators (any SQL client, goclient), before the definitions
-- that name it are registered (define_workflow refuses an unknown name). A
-- change applies from the next claim; a grown limit wakes its waiting
-- executions at once.
--
-- Locks: the limit's row (upsert), then the keys of its waiting executions.
-- Records the action (geneva._log_action).
-- Raises: 22004 for a NULL name or p_by; 22023 for an empty name, p_by not
-- none, group, hero, type or parent, neither a concurrency nor a rate, a bound under
-- 1, a rate without a per or a per not above zero or in months or years;
-- 22001 for a name over 255 bytes.
create or replace function geneva.define_limit(
  p_name text,
  p_concurrency integer default null,
  p_rate integer default null,
  p_per interval default null,
  p_by text default 'none'
)
returns void
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_limiting text := pg_catalog.current_setting('geneva.limiting', true);
  v_now timestamptz := geneva.now();
begin
  -- the only writers of the limits' tables (sql/guards/limits_guard.sql)
  perform pg_catalog.set_config('geneva.limiting', 'on', true);
  if p_name is null or p_by is null then
    raise exception 'limit name and by must not be null' using errcode = '22004';
  end if;
  perform geneva._check_length(p_name, 255, 'limit name');
  if p_name = '' then
    raise exception 'limit name must not be empty' using errcode = '22023';
  end if;
  if p_by not in ('none', 'group', 'hero', 'type', 'parent') then
    raise exception 'limit %: by % is not none, group, hero, type or parent', p_name, p_by using errcode = '22023';
  end if;
  if p_concurrency is null and p_rate is null then
    raise exception 'limit % has neither a concurrency nor a rate', p_name using errcode = '22023';
  end if;
  if p_concurrency < 1 or p_rate < 1 then
    raise exception 'limit %: a concurrency or rate must be at least 1', p_name using errcode = '22023';
  end if;
  if p_rate is not null and (p_per is null or p_per <= interval '0'
    or extract(month from p_per) <> 0 or extract(year from p_per) <> 0) then
    raise exception 'limit %: a rate needs a per above zero, in days, hours, minutes or seconds', p_name
      using errcode = '22023';
  end if;
  insert into geneva.limits as l (name, concurrency, rate, per, by, created_at, updated_at)
  values (p_name, p_concurrency, p_rate, case when p_rate is not null then p_per end, p_by, v_now, v_now)
  on conflict (name) do update
  set concurrency = excluded.concurrency,
    rate = excluded.rate,
    per = excluded.per,
    by = excluded.by,
    updated_at = excluded.updated_at;
  -- a grown limit takes its waiters now
  perform geneva._limit_release(array(
    select distinct e.limit_wait_key
    from geneva.step_executions e
    -- (a waiter is scheduled: see geneva.step_executions_limit_waiting)
    where e.limit_wait_key is not null
      and (e.limit_wait_key::jsonb ->> 0) = 'limit'
      and (e.limit_wait_key::jsonb ->> 1) = p_name
  ));

  perform geneva._log_action(
    'define_limit', null,
    jsonb_strip_nulls(jsonb_build_object(
      'name', p_name, 'concurrency', p_concurrency, 'rate', p_rate, 'per', p_per, 'by', p_by
    )),
    null
  );
  perform pg_catalog.set_config('geneva.limiting', coalesce(v_limiting, ''), true);
end;
$$;

comment on function geneva.define_limit(text, integer, integer, interval, text) is
'Creates or replaces a named limit (concurrency, rate per window, by none, group, hero, type or parent) for the steps that name it.';
