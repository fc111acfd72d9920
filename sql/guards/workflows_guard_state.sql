-- geneva._trg_workflows_guard_state: refuses illegal workflow transitions,
-- so that hand-written SQL cannot corrupt a workflow (e.g. finished back to
-- ready). The engine's functions only make legal ones and pass through.
--
-- Legal: ready -> performing, paused, finished, canceled; performing -> ready,
-- paused, finished, canceled; paused -> ready, finished, canceled. Finished
-- and canceled are final.
-- The trigger's WHEN clause holds the rule, as the two illegal kinds of
-- change of state: from an ended state, and from paused to performing (a
-- state outside the five is the CHECK's to refuse). It reads the ended and
-- paused states from their timestamps, which the CHECK constraint
-- workflows_state_valid ties to them: PostgreSQL reads and prepares a WHEN
-- clause anew for every statement that updates the table, and a clause
-- without text constants is read in a fraction of the time (a list of the
-- legal transitions cost several times as much, and a list of row
-- comparisons more). The function, which says what was refused, runs only
-- to refuse.
-- Fired by: the trigger workflows_guard_state, before update of state on
-- geneva.workflows, for each row whose transition is illegal.
-- Raises: 55000, naming the workflow and both states.
create or replace function geneva._trg_workflows_guard_state()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'workflow % cannot go from % to %', old.id, old.state, new.state
    using errcode = '55000',
          hint = 'Move workflows with the geneva functions (pause_workflow, resume_workflow, cancel_workflow, skip_step).',
          table = 'workflows';
end;
$$;

create or replace trigger workflows_guard_state
before update of state on geneva.workflows
for each row
when (
  old.state is distinct from new.state
  and (
    -- finished or canceled (workflows_state_valid ties each to its timestamp)
    old.finished_at is not null or old.canceled_at is not null
    or old.paused_at is not null and new.state = 'performing'
  )
)
execute function geneva._trg_workflows_guard_state();
