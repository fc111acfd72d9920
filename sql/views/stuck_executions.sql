-- geneva.stuck_executions: executions that may be stuck: in_progress (their
-- worker may have died), or scheduled and overdue while their workflow is
-- ready (their job may be lost). "stuck" says whether housekeeping would
-- recover it with its default thresholds: no start or checkpoint for an hour,
-- or overdue by 15 minutes with no River job waiting for it.
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
  case
    when e.state = 'in_progress' then e.updated_at < geneva.now() - interval '1 hour'
    else e.scheduled_for < geneva.now() - interval '15 minutes'
      -- (a lookup by primary key for each row: see geneva._complete_job)
      and coalesce((select j.state::text from public.river_job j where j.id = e.job_id), 'gone')
        not in ('available', 'scheduled', 'retryable', 'pending')
  end as stuck,
  e.job_id
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
where (e.state = 'in_progress')
  or (e.state = 'scheduled' and e.scheduled_for < geneva.now() and w.state = 'ready');

comment on view geneva.stuck_executions is
'Executions in progress or overdue, with whether housekeeping''s default thresholds count them as stuck.';
