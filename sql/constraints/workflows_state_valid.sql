-- geneva._chk_workflows_state_valid: the rules of a workflow's row, which
-- the CHECK constraint workflows_state_valid holds every writer to (the
-- engine's functions, and the owner's hand-written SQL): its state is one of
-- the five; an operator's request (pause, cancel), or an event's of the
-- type's cancel_on (cancel_by_event), waits only on a performing workflow,
-- for its step boundary; the step running now is set only while
-- performing; each of paused, finished and canceled has its timestamp, set
-- exactly while the workflow is in it (the indexes of migrations/001 name
-- these instead of the state, so that a step's moves between ready and
-- performing are HOT updates); the type and the hero's names are not empty.
--
-- A function, not the rules written in the CHECK: PostgreSQL reads a CHECK's
-- stored expression and prepares it anew for every statement that writes the
-- table, and these rules' constants made that a third of a create_workflow
-- (bench/NOTES.md); a PL/pgSQL function is compiled once a session and
-- called once a row. For the same reason it has no `set search_path`: a
-- function's settings are set and restored at every call. It names only
-- pg_catalog's operators, and only the owner and the engine's functions
-- (whose search_path is pg_catalog first) write the table.
--
-- Called by: the CHECK constraint workflows_state_valid, attached below once
-- (a database that has it keeps it: after a change of these rules, drop it
-- in install.sql's graveyard so that it is attached and checked anew).
create or replace function geneva._chk_workflows_state_valid(
  p_state text,
  p_requested_action text,
  p_current_step_name text,
  p_paused_at timestamptz,
  p_finished_at timestamptz,
  p_canceled_at timestamptz,
  p_workflow_type text,
  p_hero_type text,
  p_hero_id text
)
returns boolean
language plpgsql
immutable
parallel safe
as $$
begin
  return p_state in ('ready', 'performing', 'paused', 'finished', 'canceled')
    and (p_requested_action is null or (p_requested_action in ('pause', 'cancel', 'cancel_by_event') and p_state = 'performing'))
    and (p_current_step_name is null or p_state = 'performing')
    and (p_state = 'paused') = (p_paused_at is not null)
    and (p_state = 'finished') = (p_finished_at is not null)
    and (p_state = 'canceled') = (p_canceled_at is not null)
    and p_workflow_type <> '' and p_hero_type <> '' and p_hero_id <> '';
end;
$$;

do $$
begin
  if not exists (
    select from pg_catalog.pg_constraint c
    where c.conrelid = 'geneva.workflows'::pg_catalog.regclass and c.conname = 'workflows_state_valid'
  ) then
    alter table geneva.workflows add constraint workflows_state_valid check (geneva._chk_workflows_state_valid(
      state, requested_action, current_step_name, paused_at, finished_at, canceled_at, workflow_type, hero_type, hero_id
    ));
  end if;
end
$$;
