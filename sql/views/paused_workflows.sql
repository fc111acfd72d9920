-- geneva.paused_workflows: every paused workflow and why: the error that
-- paused it (when its last ended execution failed: an exception, reattempts
-- run out, a step no longer defined), and the execution it keeps scheduled
-- (an operator's pause) with how overdue it is. last_error_class is the
-- error's recorded class; error_classes every class of its chain, so that
-- `'*net.OpError' = any(error_classes)` finds it however it was wrapped.
--
-- For dashboards and operators; `geneva ls --state paused` reads it. Reads
-- workflows_paused, then each paused workflow's executions by
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
  case when last_ended.state = 'failed' then last_ended.step_name end as error_step_name,
  case when last_ended.state = 'failed' then last_ended.outcome end as error_outcome,
  case when last_ended.state = 'failed' then last_ended.error_class_name end as last_error_class,
  case when last_ended.state = 'failed' then last_ended.error_message end as last_error_message,
  case when last_ended.state = 'failed' then last_ended.failed_at end as last_error_at,
  kept.id as kept_execution_id,
  kept.scheduled_for as kept_scheduled_for,
  case when kept.id is not null then greatest(geneva.now() - kept.scheduled_for, interval '0') end as kept_overdue_by,
  case when last_ended.state = 'failed' then last_ended.error_classes end as error_classes
from geneva.workflows w
left join lateral (
  select e.step_name, e.state, e.outcome, e.error_class_name, e.error_message, e.failed_at, e.error_classes
  from geneva.step_executions e
  where e.workflow_id = w.id
    and e.state not in ('scheduled', 'in_progress')
  order by e.id desc
  limit 1
) last_ended on true
left join lateral (
  select e.id, e.scheduled_for
  from geneva.step_executions e
  where e.workflow_id = w.id
    and e.state = 'scheduled'
) kept on true
-- (a workflow has paused_at exactly while paused: workflows_state_valid)
where w.paused_at is not null;

comment on view geneva.paused_workflows is
'Paused workflows with the error that paused them and the execution they keep scheduled.';
