-- geneva.allow_fake_clock: turns the test clock on or off for this database:
-- whether geneva.now() honours a session's geneva.fake_now (see
-- sql/api/now.sql). On means the table geneva.fake_clock_enabled
-- exists. Off after a fresh install; `geneva migrate` leaves it as it is.
--
-- Called by: test harnesses (internal/dbtest, after migrating a test
-- database), outside test suites; never in production.
-- For the schema's owner only: it is not a security definer (it runs as its
-- caller) and is granted to no one, and creating a table in schema geneva needs the owner's privilege, so
-- any other role gets 42501.
-- Raises: 22004 for NULL; 42501 for a role other than the owner.
create or replace function geneva.allow_fake_clock(p_allow boolean)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_allow is null then
    raise exception 'allow must not be null' using errcode = '22004';
  end if;
  if p_allow then
    create table if not exists geneva.fake_clock_enabled ();
    comment on table geneva.fake_clock_enabled is
      'Test database: geneva.now() honours the setting geneva.fake_now (geneva.allow_fake_clock).';
  else
    drop table if exists geneva.fake_clock_enabled;
  end if;
end;
$$;

comment on function geneva.allow_fake_clock(boolean) is
'Test databases only, owner only: lets geneva.now() honour the setting geneva.fake_now (true) or not (false).';
