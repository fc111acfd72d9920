-- Many workflows at once: geneva.create_workflows (docs/operating.md, "Many
-- workflows at once"). Run with psql -f on a database with Geneva's schema.
\set ON_ERROR_STOP on

-- 1. A workflow for each of three users, in one statement: all or none.
select geneva.define_workflow('Welcome', '{
  "steps": [{"name": "send_email"}, {"name": "send_tips", "wait": "1 day"}]
}');
select geneva.create_workflows('Welcome', 'User', array['1', '2', '3'],
  p_groups => array['acme', 'acme', 'globex']) as ids;

-- 2. The heroes from a query: everyone who signed up today, say.
select geneva.create_workflows('Welcome', 'User',
  array(select id::text from (values (4), (5)) as signups (id) order by id)) as ids;

-- 3. With idempotency keys, a retried call returns the same workflows and
--    creates nothing.
select geneva.create_workflows('Welcome', 'User', array['6', '7'],
  p_idempotency_keys => array['signup-6', 'signup-7']) as first_call;
select geneva.create_workflows('Welcome', 'User', array['6', '7'],
  p_idempotency_keys => array['signup-6', 'signup-7']) as retried;

-- The workflows it leaves: seven, each with its first step scheduled.
select w.hero_id, w.group_name, w.state, e.step_name, e.state as execution
from geneva.workflows w join geneva.step_executions e on e.workflow_id = w.id
order by w.id;
