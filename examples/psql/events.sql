-- Events from psql: a step that waits for a manager's approval. Run it on a
-- database with Geneva installed: psql -X -f examples/psql/events.sql
\set ON_ERROR_STOP on

-- 1. A step that awaits an event: after its own wait (none here) it waits up
--    to 48 hours for "approved", then pauses the workflow for an operator.
select geneva.define_workflow('Expense', '{
  "steps": [
    {"name": "submit"},
    {"name": "approve",
     "await": {"event": "approved", "timeout": "48 hours", "on_timeout": "pause"}},
    {"name": "reimburse"}
  ]
}');
select geneva.create_workflow('Expense', 'Expense', '1001') as workflow_id \gset

-- Be the worker for the first step.
select id as execution_id from geneva.step_executions
where workflow_id = :workflow_id and state = 'scheduled' \gset
select step_name from geneva.start_step(:execution_id);
select outcome from geneva.complete_step(:execution_id);

-- 2. The approval step waits: the operators' inbox lists it.
select workflow_id, step_name, event, timeout_at, on_timeout from geneva.awaiting_events;

-- 3. The manager approves. The step is due at once (its River job too).
select geneva.send_event(:workflow_id, 'approved', '{"approved_by": "ann"}');

-- 4. The worker that claims it gets the event.
select id as execution_id from geneva.step_executions
where workflow_id = :workflow_id and state = 'scheduled' \gset
select step_name, event_name, event_payload from geneva.start_step(:execution_id);
select outcome from geneva.complete_step(:execution_id);

-- 5. From the application's own transaction: a trigger on its table sends
--    the event to every ongoing workflow of the hero, and the event commits
--    or rolls back with the row.
create table approvals (expense_id text primary key, approved_by text not null);
create function approvals_send_event() returns trigger
language plpgsql as $$
begin
  perform geneva.send_hero_event('Expense', new.expense_id, 'approved',
    jsonb_build_object('approved_by', new.approved_by));
  return new;
end;
$$;
create trigger approvals_send_event after insert on approvals
for each row execute function approvals_send_event();

select geneva.create_workflow('Expense', 'Expense', '1002') as other_id \gset
begin;
insert into approvals values ('1002', 'bob');
rollback;  -- no approval, no event
insert into approvals values ('1002', 'carol');  -- committed: the event is sent

-- 6. A webhook is delivered at least once: with its delivery id as the
--    event's key, a repeated delivery records nothing and returns false,
--    even when the two race.
select geneva.send_event(:other_id, 'receipt', '{"amount": 42}', p_key => 'delivery-7');
select geneva.send_event(:other_id, 'receipt', '{"amount": 42}', p_key => 'delivery-7');

-- 7. Start on an event: a payment for a hero without an ongoing Refund
--    workflow creates one in this transaction, and it receives the event;
--    the same delivery again reaches nothing and starts nothing.
select geneva.define_workflow('Refund', '{
  "steps": [{"name": "refund", "await": {"event": "paid", "timeout": "1 day"}}]
}');
select geneva.send_hero_event('Expense', '1003', 'paid', '{"amount": 12}',
  p_key => 'pay-1', p_start => 'Refund');  -- 1: the Refund it started
select geneva.send_hero_event('Expense', '1003', 'paid', '{"amount": 12}',
  p_key => 'pay-1', p_start => 'Refund');  -- 0

-- 8. A new version of Expense: running workflows follow it from their next
--    step (definition_version), and the drain view says how many started
--    under each version are still ongoing: none left on a version, and the
--    worker code that ran it may go.
select geneva.define_workflow('Expense', '{
  "steps": [
    {"name": "submit"},
    {"name": "approve",
     "await": {"event": "approved", "timeout": "72 hours", "on_timeout": "pause"}},
    {"name": "reimburse"}
  ]
}');
select hero_id, started_version, definition_version from geneva.workflows
where workflow_type = 'Expense' order by id;
select workflow_type, version, current, ongoing from geneva.definition_versions
order by workflow_type, version;

-- 9. Any of several events, counting only those sent after the wait began
--    ("since": "wait"): a rejection sent while the claim was being filed
--    does not decide it; the approval sent after does, and the step sees
--    which event came and who sent it.
select geneva.define_workflow('Claim', '{
  "steps": [
    {"name": "file"},
    {"name": "decide",
     "await": {"event": ["approved", "rejected"], "since": "wait", "timeout": "2 days"}}
  ],
  "cancel_on": ["claim.withdrawn"]
}');
select geneva.create_workflow('Claim', 'Claim', 'c-1') as claim_id \gset
select geneva.send_event(:claim_id, 'rejected', '{"by": "a stale rule"}');
select id as execution_id from geneva.step_executions
where workflow_id = :claim_id and state = 'scheduled' \gset
select step_name from geneva.start_step(:execution_id);
select outcome from geneva.complete_step(:execution_id);
select step_name, events, since from geneva.awaiting_events
where workflow_id = :claim_id;  -- still waiting: the rejection came before
select geneva.send_event(:claim_id, 'approved', '{"by": "ann"}');
select id as execution_id from geneva.step_executions
where workflow_id = :claim_id and state = 'scheduled' \gset
select step_name, event_name, event_payload, event_sent_by = current_user as sent_by_me
from geneva.start_step(:execution_id);
select outcome from geneva.complete_step(:execution_id);

-- 10. Cancel on an event: the application, which may send events but not
--     cancel, withdraws claim c-2 ("cancel_on" above). A ready or paused
--     workflow is canceled at once, in the sender's transaction; a
--     performing one when its running step ends, instead of moving on.
select geneva.create_workflow('Claim', 'Claim', 'c-2') as withdrawn_id \gset
select geneva.send_event(:withdrawn_id, 'claim.withdrawn', '{"reason": "duplicate"}');
select w.state, e.step_name, e.outcome
from geneva.workflows w join geneva.step_executions e on e.workflow_id = w.id
where w.id = :withdrawn_id;

-- The history it leaves.
select w.hero_id, e.name, e.payload, e.consumed_by is not null as consumed
from geneva.events e join geneva.workflows w on w.id = e.workflow_id
order by e.id;
