-- geneva.now(): the engine's clock.
--
-- Returns the setting geneva.fake_now when it holds a timestamp, else now() (the
-- start of the current transaction). Every engine function reads time only
-- through this, so tests travel in time with `set geneva.fake_now = '…'`.
--
-- Called by: every engine function; tests.
-- Unlike the other functions it has no `set search_path`: every name is
-- qualified, and without the setting the planner can inline it.
create or replace function geneva.now()
returns timestamptz
language sql
stable
parallel safe
as $$
  select coalesce(
    nullif(pg_catalog.current_setting('geneva.fake_now', true), '')::timestamptz,
    pg_catalog.now()
  )
$$;

comment on function geneva.now() is
'The engine''s clock: the setting geneva.fake_now when set, else now().';
