-- geneva.now(): the engine's clock.
--
-- Returns now() (the start of the current transaction), or, in a test
-- database, the setting geneva.fake_now when it holds a timestamp. Every
-- engine function reads time only through this, so tests travel in time with
-- `set geneva.fake_now = '…'`.
--
-- A test database is one where the table geneva.fake_clock_enabled exists:
-- the owner's `select geneva.allow_fake_clock(true)` (the test harness calls
-- it) creates it. Only the schema's owner can create tables in schema geneva,
-- so in any other database a session's geneva.fake_now is ignored: no role
-- can move the clock that decides what is due or stuck. The check is a
-- catalog lookup made only when the setting is set.
--
-- Called by: every engine function; tests.
-- Unlike the other functions it has no `set search_path` and is not a
-- security definer: every name is qualified, it reads no table, and without
-- either the planner can inline it.
create or replace function geneva.now()
returns timestamptz
language sql
stable
parallel safe
as $$
  select case
    when nullif(pg_catalog.current_setting('geneva.fake_now', true), '') is null then pg_catalog.now()
    when pg_catalog.to_regclass('geneva.fake_clock_enabled') is null then pg_catalog.now()
    else pg_catalog.current_setting('geneva.fake_now')::pg_catalog.timestamptz
  end
$$;

comment on function geneva.now() is
'The engine''s clock: now(), or the setting geneva.fake_now where geneva.allow_fake_clock(true) was called (test databases).';
