-- Geneva 002: indexes for housekeeping and dashboards.
--
-- Housekeeping looks for executions stuck in_progress (no sign of life since
-- updated_at: their start or a resumable step's last checkpoint) or overdue
-- while scheduled, and for finished or canceled workflows past their
-- retention; each of these partial indexes holds only the rows such a pass
-- can pick.

create index step_executions_in_progress_updated_at on geneva.step_executions (updated_at)
where state = 'in_progress';

create index step_executions_scheduled_for on geneva.step_executions (scheduled_for)
where state = 'scheduled';

create index workflows_ended_transitioned_at on geneva.workflows (transitioned_at)
where state in ('finished', 'canceled');
