-- geneva._trg_step_executions_guard_times: refuses the two hand writes of an
-- execution's times that stop a workflow without breaking a state rule, for
-- every role, the owner included (the others have no privilege on the table
-- at all):
--   - ageing a running execution's updated_at (its last start, checkpoint or
--     heartbeat): housekeeping would take the live step for one whose worker
--     died and recover it while it runs. The engine sets it to
--     geneva.now() only (which, on a test clock, may go back).
--   - pushing a scheduled execution's scheduled_for beyond 200 years after
--     geneva.now() ('infinity', a mistyped year): the step would never run,
--     nor ever count as stuck. No engine function sets a time that far (a
--     wait and an await's timeout are 100 years at most each).
--
-- The trigger's WHEN clause is only a sieve, the least expression that
-- lets through every update the rules refuse: the engine sets a running
-- execution's updated_at to its clock, which never goes back (but on a test
-- clock), and moves scheduled_for later only to rewait an awaited event or
-- for a rate limit's window, so the function runs for few of the engine's
-- own updates, and decides on the engine's clock. PostgreSQL reads and
-- prepares the clause anew for every statement that fires the trigger, at
-- a cost that grows with its size: the rules themselves there (a state, a
-- clock) cost 1.4% of a step's instructions, geneva.now() in them 5%
-- (measured: bench/NOTES.md). After the update, not before: see
-- step_executions_guard_ended.
-- Fired by: the trigger step_executions_guard_times, after an update of
-- updated_at or scheduled_for of geneva.step_executions, for each row whose
-- updated_at goes back or scheduled_for forward.
-- Raises: 55000, naming the execution.
create or replace function geneva._trg_step_executions_guard_times()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if new.updated_at < old.updated_at and new.state = 'in_progress' and new.updated_at <> geneva.now() then
    raise exception 'the last sign of life of running step execution % cannot be aged by hand', old.id
      using errcode = '55000',
            detail = pg_catalog.format('From %s to %s.', old.updated_at, new.updated_at),
            hint = 'Housekeeping would recover a live step. To give a running step back, its worker calls geneva.interrupt_step.',
            table = 'step_executions';
  end if;
  if new.scheduled_for > old.scheduled_for and new.scheduled_for > geneva.now() + interval '200 years' then
    raise exception 'step execution % cannot be scheduled beyond 200 years from now by hand', old.id
      using errcode = '55000',
            detail = pg_catalog.format('scheduled_for %s.', new.scheduled_for),
            hint = 'To keep a workflow from running, pause it (geneva.pause_workflow).',
            table = 'step_executions';
  end if;
  return null;
end;
$$;

create or replace trigger step_executions_guard_times
after update of updated_at, scheduled_for on geneva.step_executions
for each row
when (new.updated_at < old.updated_at or new.scheduled_for > old.scheduled_for)
execute function geneva._trg_step_executions_guard_times();
