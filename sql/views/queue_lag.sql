-- geneva.queue_lag: per queue, the executions that are due but have not
-- started while their workflow is ready, and how long the oldest of them has
-- waited (the queue's lag). Executions waiting for a slot of a limit are
-- not due for the queue (geneva.limit_usage counts them).
--
-- For the dashboard and alerts. Reads the partial index
-- step_executions_scheduled_for for the due executions.
create or replace view geneva.queue_lag as
select
  -- (the step's queue, as geneva._step_queue has it: a view reads no helper)
  coalesce(d.step_queues[array_position(d.step_names, e.step_name)], d.queue) as queue,
  count(*) as due_executions,
  min(e.scheduled_for) as oldest_scheduled_for,
  geneva.now() - min(e.scheduled_for) as lag,
  (array_agg(e.id order by e.scheduled_for, e.id))[1] as oldest_execution_id
from geneva.step_executions e
join geneva.workflows w on w.id = e.workflow_id
join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
where e.state = 'scheduled'
  and e.scheduled_for <= geneva.now()
  and e.limit_wait_key is null
  and w.state = 'ready'
group by 1;

comment on view geneva.queue_lag is
'Per queue: executions due but not started (their workflow ready) and the oldest one''s wait.';
