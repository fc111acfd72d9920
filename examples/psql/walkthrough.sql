-- Driving Geneva from psql alone: the worker protocol by hand, then the
-- operator functions. Run it on a database with Geneva's schema:
--
--   psql "$DATABASE_URL" -f examples/psql/walkthrough.sql
--
-- (docs/psql.md quotes this file; tests/readme_test.go runs it.)
\set ON_ERROR_STOP on

-- 1. Define a workflow type: steps in run order, waits, an exception policy.
select geneva.define_workflow('Onboarding', '{
  "steps": [
    {"name": "send_welcome"},
    {"name": "send_reminder", "wait": "2 days",
     "on_exception": {"action": "reattempt", "wait": "10 minutes", "max_reattempts": 3}},
    {"name": "schedule_call"}
  ]
}');

-- 2. Create a workflow for a hero: its first step is scheduled at once, with a
--    River job in the same transaction.
select geneva.create_workflow('Onboarding', 'User', '42') as workflow_id \gset
select id as execution_id from geneva.step_executions
where workflow_id = :workflow_id and state = 'scheduled' \gset

-- 3. Be the worker: claim the step, run it (here: nothing), report success.
select step_name, attempt from geneva.start_step(:execution_id);
select * from geneva.complete_step(:execution_id);

-- The reminder waits two days. Travel there with the engine's clock.
select id as execution_id, scheduled_for from geneva.step_executions
where workflow_id = :workflow_id and state = 'scheduled' \gset
select set_config('geneva.fake_now', (:'scheduled_for'::timestamptz)::text, false);

-- 4. Operate: pause keeps the scheduled step; resume enqueues it again.
select state from geneva.pause_workflow(:workflow_id);
select state from geneva.resume_workflow(:workflow_id);

-- 5. The reminder fails: the step's policy reattempts it in 10 minutes.
select step_name from geneva.start_step(:execution_id);
select action, outcome, report from geneva.fail_step(
  :execution_id, array['SmtpTimeout'], 'connection timed out');

-- 6. An operator skips the reattempt, then cancels the workflow.
select state, next_step_name from geneva.skip_step(:workflow_id);
select state from geneva.cancel_workflow(:workflow_id);

-- The history, one row per execution.
select id, step_name, state, outcome, error_class_name
from geneva.step_executions where workflow_id = :workflow_id order by id;
