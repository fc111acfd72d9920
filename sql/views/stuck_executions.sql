-- geneva.stuck_executions: the executions housekeeping would recover as
-- stuck: in_progress with no start, checkpoint or heartbeat (updated_at) for
-- the stuck-in-progress threshold (their worker died), or scheduled and
-- overdue by the stuck-scheduled threshold while their workflow is ready
-- (their job was lost, or the queue is that far behind). Executions of
-- paused workflows are never stuck. The thresholds are housekeeping's
-- settings (geneva.housekeeping_settings: an hour and 15 minutes unless an
-- operator set others); a session may set its own, as intervals, in
-- geneva.stuck_in_progress_after and geneva.stuck_scheduled_after.
--
-- For dashboards and operators. Reads the partial indexes
-- step_executions_in_progress_updated_at and step_executions_scheduled_for.

create or replace view geneva.stuck_executions as
select
  e.id as execution_id,
  e.workflow_id,
  w.workflow_type,
  w.hero_type,
  w.hero_id,
  e.step_name,
  e.state,
  e.scheduled_for,
  e.started_at,
  case when e.state = 'in_progress' then geneva.now() - e.started_at end as running_for,
  case when e.state = 'in_progress' then geneva.now() - e.updated_at end as silent_for,
  case when e.state = 'scheduled' then geneva.now() - e.scheduled_for end as overdue_by,
  e.job_id
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
where (
    e.state = 'in_progress'
    and e.updated_at < geneva.now() - coalesce(
      nullif(current_setting('geneva.stuck_in_progress_after', true), '')::interval,
      (select s.stuck_in_progress_after from geneva.housekeeping_settings s where s.singleton)
    )
  )
  or (
    e.state = 'scheduled'
    and e.scheduled_for < geneva.now() - coalesce(
      nullif(current_setting('geneva.stuck_scheduled_after', true), '')::interval,
      (select s.stuck_scheduled_after from geneva.housekeeping_settings s where s.singleton)
    )
    -- (an execution waiting for a slot of a limit has no job: not stuck)
    and e.limit_wait_key is null
    and w.state = 'ready'
  );

comment on view geneva.stuck_executions is
'Executions housekeeping would recover as stuck (thresholds: geneva.stuck_in_progress_after, geneva.stuck_scheduled_after; default: the housekeeping settings).';
