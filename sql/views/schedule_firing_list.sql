-- geneva.schedule_firing_list: what each schedule's slots did, newest first
-- per schedule: the slot, when it was fired, the workflow created, or why
-- none was (skipped_reason). A schedule keeps its newest 1000 firings.
--
-- For operators (the dashboard's Schedules page: skipped slots and why).
-- Reads schedule_firings (schedule_firings_one_per_slot) and schedules.
create or replace view geneva.schedule_firing_list as
select
  s.name as schedule_name,
  f.schedule_id,
  f.slot,
  f.fired_at,
  f.workflow_id,
  f.skipped_reason is not null as skipped,
  f.skipped_reason
from geneva.schedule_firings f
join geneva.schedules s on s.id = f.schedule_id;

comment on view geneva.schedule_firing_list is
'Schedules'' firings: slot, when fired, workflow created or why skipped.';
