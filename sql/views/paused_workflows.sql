-- geneva.paused_workflows: every paused workflow and why: its last error (of
-- the execution it paused on, if an error paused it), and the execution it
-- keeps scheduled (an operator's pause) with how overdue it is.
--
-- For dashboards and operators; `geneva ls --state paused` reads it. Reads
-- workflows_state_type, then each paused workflow's executions by
-- step_executions_workflow_id.
create or replace view geneva.paused_workflows as
select
  w.id as workflow_id,
  w.workflow_type,
  w.hero_type,
  w.hero_id,
  w.next_step_name,
  w.paused_at,
  geneva.now() - w.paused_at as paused_for,
  last_error.step_name as error_step_name,
  last_error.outcome as error_outcome,
  last_error.error_class_name as last_error_class,
  last_error.error_message as last_error_message,
  last_error.failed_at as last_error_at,
  kept.id as kept_execution_id,
  kept.scheduled_for as kept_scheduled_for,
  greatest(geneva.now() - kept.scheduled_for, interval '0') as kept_overdue_by
from geneva.workflows w
left join lateral (
  select e.step_name, e.outcome, e.error_class_name, e.error_message, coalesce(e.failed_at, e.finished_at) as failed_at
  from geneva.step_executions e
  where e.workflow_id = w.id
    and e.error_message is not null
  order by e.id desc
  limit 1
) last_error on true
left join lateral (
  select e.id, e.scheduled_for
  from geneva.step_executions e
  where e.workflow_id = w.id
    and e.state = 'scheduled'
) kept on true
where w.state = 'paused';

comment on view geneva.paused_workflows is
'Paused workflows with their last error and the execution they keep scheduled.';
