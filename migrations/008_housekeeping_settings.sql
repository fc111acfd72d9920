-- Geneva 008: housekeeping's thresholds are the operators' settings, one row,
-- instead of arguments every worker passed: a worker's role could choose a
-- retention of zero (deleting every ended workflow), a stuck threshold of
-- zero (recovering every running step) or the cancel action.
--
-- geneva.housekeep_if_due, which workers call, takes none and reads this
-- row; geneva.housekeep (operators) reads it for each argument not given.
-- Only geneva.set_housekeeping_settings writes it (validated; the guard
-- sql/triggers/housekeeping_settings_guard.sql refuses other writes), which
-- is granted to the operator role alone; geneva.get_housekeeping_settings
-- reads it. Granted to no role, as every table.
--
-- The defaults are the ones housekeeping had as arguments, declared here
-- only. A NULL retention keeps ended workflows forever. updated_at and
-- updated_by (session_user) say who last set them; NULL: never set.

create table geneva.housekeeping_settings (
  singleton boolean primary key default true check (singleton),
  retention interval default interval '30 days',
  stuck_in_progress_after interval not null default interval '1 hour',
  stuck_scheduled_after interval not null default interval '15 minutes',
  recovery_action text not null default 'reattempt',
  batch_size integer not null default 1000,
  updated_at timestamptz,
  updated_by text,
  constraint housekeeping_settings_intervals_valid check (
    retention >= interval '0'
    and stuck_in_progress_after >= interval '0'
    and stuck_scheduled_after >= interval '0'
  ),
  constraint housekeeping_settings_recovery_action_valid check (recovery_action in ('reattempt', 'cancel')),
  constraint housekeeping_settings_batch_size_valid check (batch_size > 0)
);

insert into geneva.housekeeping_settings default values;
