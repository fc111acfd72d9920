-- Schedules from psql: a digest every weekday morning in Berlin. Run it on a
-- database with Geneva installed: psql -X -f examples/psql/schedules.sql
\set ON_ERROR_STOP on

-- 1. The workflow type to create on the cron.
select geneva.define_workflow('Digest', '{"steps": [{"name": "collect"}, {"name": "send"}]}');

-- 2. A digest for the sales team at 08:30 Berlin time, Monday to Friday
--    (operators only). After downtime only the newest missed slot fires.
select geneva.create_schedule('sales-digest', '30 8 * * mon-fri', 'Digest', 'Team', 'sales',
  p_timezone => 'Europe/Berlin', p_catch_up => 'latest');

-- 3. When it fires next: every worker calls geneva.fire_schedules() each
--    second, and the slot fires once, whoever calls.
select name, cron, timezone, paused, next_fire_at from geneva.schedule_list;

-- 4. Pause it (it fires nothing), resume it, or replace it: creating it
--    again by name keeps its history.
select paused_at is not null as paused from geneva.pause_schedule('sales-digest');
select paused_at is not null as paused from geneva.resume_schedule('sales-digest');
select geneva.create_schedule('sales-digest', '0 9 * * mon-fri', 'Digest', 'Team', 'sales',
  p_timezone => 'Europe/Berlin');

-- Under the test clock (a test database only: geneva.allow_fake_clock),
-- created again on Monday 6 January 2031 at 09:00:05 in Berlin: Tuesday's
-- slot fires, once; Wednesday's is skipped, Tuesday's digest not having run.
select name from geneva.delete_schedule('sales-digest');
set geneva.fake_now = '2031-01-06 09:00:05+01';
select geneva.create_schedule('sales-digest', '0 9 * * mon-fri', 'Digest', 'Team', 'sales',
  p_timezone => 'Europe/Berlin');
set geneva.fake_now = '2031-01-07 09:00:01+01';
select geneva.fire_schedules() as created;
select geneva.fire_schedules() as created_again;
set geneva.fake_now = '2031-01-08 09:00:01+01';
select geneva.fire_schedules() as skipped;
select slot, workflow_id is not null as created, skipped_reason
from geneva.schedule_firing_list order by slot;
