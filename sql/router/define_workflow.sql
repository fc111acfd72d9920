-- geneva.define_workflow: the cells' geneva.define_workflow, on the router
-- (docs/cells.md).
--
-- Defines the type in every cell (geneva._cells_define_workflow, RUN ON
-- ALL), so that a workflow of it may be created in any. Each cell's is its
-- own transaction: a cell that refuses the definition raises, and the cells
-- that took it keep it (defining again is idempotent). Granted to workers
-- only: the cells see the router's user, not the caller, so the rule that
-- operators define HTTP-only types could not be held here.
--
-- Called by: deployers and workers through the router.
-- Raises: what the cells' geneva.define_workflow raises.
create or replace function geneva.define_workflow(
  p_workflow_type text,
  p_definition jsonb
)
returns void
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
  select from geneva._cells_define_workflow(p_workflow_type, p_definition)
$$;

comment on function geneva.define_workflow(text, jsonb) is
'The cells'' geneva.define_workflow, in every cell.';
