-- geneva.define_workflow: the cells' geneva.define_workflow, on the router
-- (docs/cells.md).
--
-- Defines the type in every cell (geneva._cells_define_workflow, RUN ON
-- ALL), so that a workflow of it may be created in any. Each cell's is its
-- own transaction: a cell that refuses the definition raises, and the cells
-- that took it keep it (defining again is idempotent).
--
-- Who may define what is held here, as a cell holds it: a cell sees the
-- router's user (the user mapping's), not the caller, so the router checks
-- the caller first. A caller with the worker role's privileges (or the
-- schema's owner) defines any type; any other (an operator, a deployer)
-- only a type whose every step is HTTP, and replaces only one whose current
-- definition in the cells (geneva.definition_steps, merged) is HTTP only.
-- (session_user: this runs as the owner.)
--
-- Called by: deployers and workers through the router.
-- Raises: 42501 when a caller without the worker role's privileges defines
-- a type with a Go step, or replaces one whose current definition has one;
-- else what the cells' geneva.define_workflow raises.
create or replace function geneva.define_workflow(
  p_workflow_type text,
  p_definition jsonb
)
returns void
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if not pg_catalog.pg_has_role(session_user, {{ .role_worker_name }}, 'usage')
    and session_user operator(pg_catalog.<>) (
      select n.nspowner::regrole::text from pg_catalog.pg_namespace n where n.nspname = 'geneva'
    )
    and (
      pg_catalog.jsonb_typeof(p_definition -> 'steps') is distinct from 'array'
      or exists (
        select from pg_catalog.jsonb_array_elements(p_definition -> 'steps') s(step)
        where not (s.step ? 'http')
      )
      or exists (
        select from geneva.definition_steps d
        where d.workflow_type = p_workflow_type and d.http_url is null
      )
    ) then
    raise exception 'definition of %: % may define only workflows whose every step is HTTP, and replace only those', p_workflow_type, session_user
      using errcode = '42501',
            hint = 'Steps without "http" run in a Go worker, which registers its own definitions (the worker role).';
  end if;
  perform from geneva._cells_define_workflow(p_workflow_type, p_definition);
end;
$$;

comment on function geneva.define_workflow(text, jsonb) is
'The cells'' geneva.define_workflow, in every cell; a caller without the worker role''s privileges defines only HTTP-only types.';
