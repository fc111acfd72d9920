-- geneva.orphan_workflows: workflows whose state has no matching active
-- execution, shapes no engine function makes (hand-written SQL with the
-- guards disabled, a restore of part of a backup, a bug): housekeeping
-- repairs them (geneva._repair_orphan). List it before geneva.stuck_executions
-- on a dashboard: a stuck execution waits for a threshold, an orphan never
-- moves on its own.
--
-- orphan says which shape:
--   ready_without_scheduled      a ready workflow with no scheduled execution
--   performing_without_running   a performing workflow with no in_progress one
--   ended_with_active            a finished or canceled workflow with an
--                                active (scheduled or in_progress) execution
-- execution_id and execution_state name the active execution there is, if
-- any.
--
-- For dashboards and operators, and housekeeping's sweep (every round: it
-- reads every ongoing workflow, through the index workflows_ongoing_type,
-- and every active execution, through step_executions_one_active).

create or replace view geneva.orphan_workflows as
select
  w.id as workflow_id,
  w.workflow_type,
  w.hero_type,
  w.hero_id,
  w.state,
  'ready_without_scheduled' as orphan,
  e.id as execution_id,
  e.state as execution_state
from geneva.workflows w
left join geneva.step_executions e
  on e.workflow_id = w.id and e.state in ('scheduled', 'in_progress')
where w.finished_at is null and w.canceled_at is null and w.state = 'ready'
  and e.state is distinct from 'scheduled'
union all
select w.id, w.workflow_type, w.hero_type, w.hero_id, w.state, 'performing_without_running', e.id, e.state
from geneva.workflows w
left join geneva.step_executions e
  on e.workflow_id = w.id and e.state in ('scheduled', 'in_progress')
where w.finished_at is null and w.canceled_at is null and w.state = 'performing'
  and e.state is distinct from 'in_progress'
union all
select w.id, w.workflow_type, w.hero_type, w.hero_id, w.state, 'ended_with_active', e.id, e.state
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
where e.state in ('scheduled', 'in_progress')
  and w.state in ('finished', 'canceled');

comment on view geneva.orphan_workflows is
'Workflows whose state has no matching active execution (shapes no function makes); housekeeping repairs them.';
