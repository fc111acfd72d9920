-- Geneva 003: executions by when they ended, for geneva.step_stats's window.

create index step_executions_finished_at on geneva.step_executions (finished_at)
where finished_at is not null;
