-- Geneva 002: when the last round of housekeeping ran, so that any worker
-- runs one when none ran within the interval (geneva.housekeep_if_due), not
-- only River's elected leader.
--
-- One row, always present; callers take it with `for update skip locked`, so
-- that two rounds never run at once.

create table geneva.housekeeping_rounds (
  singleton boolean primary key default true check (singleton),
  -- when the last round that found nothing more to do started (-infinity:
  -- never), and what the last round did
  last_run_at timestamptz not null default '-infinity',
  last_result jsonb
);

insert into geneva.housekeeping_rounds default values;
