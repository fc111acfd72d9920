-- Children from psql: a step fans out over customers, a later step joins.
-- Run it on a database with Geneva installed:
-- psql -X -f examples/psql/children.sql
\set ON_ERROR_STOP on

-- 1. A parent whose second step awaits all its children (for up to a day,
--    then runs anyway), and the child: one step.
select geneva.define_workflow('InvoiceRun', '{
  "steps": [
    {"name": "fan_out"},
    {"name": "report",
     "await": {"children": "all", "timeout": "1 day", "on_timeout": "run"}}
  ]
}');
select geneva.define_workflow('Invoice', '{"steps": [{"name": "send"}]}');
select geneva.create_workflow('Invoice', 'Customer', '9');  -- already ongoing
select geneva.create_workflow('InvoiceRun', 'Month', '2031-01') as parent_id \gset

-- 2. Be the worker for fan_out: the step starts a child per customer,
--    skipping the customer whose invoice is already ongoing (NULL).
select id as execution_id from geneva.step_executions
where workflow_id = :parent_id and state = 'scheduled' \gset
select step_name from geneva.start_step(:execution_id);
select geneva.create_workflows('Invoice', 'Customer', array['7', '8', '9'],
  p_parent_id => :parent_id, p_skip_ongoing => true) as children;
select outcome from geneva.complete_step(:execution_id);

-- 3. The join's first claim finds its children running: no row, it waits.
select id as execution_id from geneva.step_executions
where workflow_id = :parent_id and state = 'scheduled' \gset
select step_name from geneva.start_step(:execution_id);
select state, count(*) from geneva.workflow_children
where parent_id = :parent_id group by state;

-- 4. Be the worker for every child: the last one's end makes the join due.
select (geneva.start_step(e.id)).step_name
from geneva.workflow_children c
join geneva.step_executions e on e.workflow_id = c.workflow_id and e.state = 'scheduled'
where c.parent_id = :parent_id;
select (geneva.complete_step(e.id)).outcome
from geneva.workflow_children c
join geneva.step_executions e on e.workflow_id = c.workflow_id and e.state = 'in_progress'
where c.parent_id = :parent_id;

-- 5. The join runs with its children's counts.
select step_name, event_name, event_payload from geneva.start_step(:execution_id);

-- The family it leaves.
select parent_id, workflow_id, hero_id, state from geneva.workflow_children order by workflow_id;
