-- geneva.now(): the router's clock, on the router (docs/cells.md).
--
-- now(): the router has no test clock (geneva.fake_now is a cell's
-- setting, and a session's settings do not reach the cells); a dashboard
-- through the router reads it to place its charts' minutes.
--
-- Called by: dashboards through the router.
create or replace function geneva.now()
returns timestamptz
language sql
stable
parallel safe
security definer
set search_path = pg_catalog, pg_temp
as $$
  select pg_catalog.now()
$$;

comment on function geneva.now() is
'The router''s clock: now() (the cells'' test clock does not reach through the router).';
