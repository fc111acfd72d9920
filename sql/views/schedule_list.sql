-- geneva.schedule_list: every schedule: what it creates, on which cron in
-- which time zone, whether it is paused, when it fires next, what its last
-- firing did (the slot, when it ran, the workflow it created and that
-- workflow's state; the last skipped slot and why) and how many it fired and
-- skipped. lag_seconds: how long an active schedule's due slot has waited
-- for geneva.fire_schedules (0 when none is due): with workers up, under the
-- firing interval (a second by default).
--
-- For operators (the dashboard's Schedules page, `geneva schedule ls`) and
-- metrics. Reads schedules, and each last workflow by primary key.
create or replace view geneva.schedule_list as
select
  s.id,
  s.name,
  s.cron,
  s.timezone,
  s.workflow_type,
  s.hero_type,
  s.hero_id,
  s.allow_multiple,
  s.catch_up,
  s.paused_at is not null as paused,
  s.paused_at,
  s.next_fire_at,
  s.last_slot,
  s.last_fired_at,
  s.last_workflow_id,
  w.state as last_workflow_state,
  s.last_skipped_slot,
  s.last_skip_reason,
  s.fired_count,
  s.skipped_count,
  case
    when s.paused_at is null and s.next_fire_at <= geneva.now()
      then extract(epoch from geneva.now() - s.next_fire_at)::double precision
    else 0
  end as lag_seconds,
  s.created_at,
  s.updated_at,
  s.updated_by
from geneva.schedules s
left join geneva.workflows w on w.id = s.last_workflow_id;

comment on view geneva.schedule_list is
'Schedules: cron, time zone, type, hero, paused, next and last fire, last workflow, last skip and why, counts, lag.';
