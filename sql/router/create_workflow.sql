-- geneva.create_workflow: the cells' geneva.create_workflow, on the router
-- (docs/cells.md).
--
-- Runs in the cell of the hero's partition (geneva._hero_hash), or of the
-- parent's for a child (geneva._create_hash): one ongoing workflow per hero
-- holds there, as in one database. The cell makes an id carrying that
-- partition (cell/_workflow_id.sql). The call commits in the cell on its own
-- (PL/Proxy's calls are autocommit): it does not join the caller's
-- transaction.
--
-- Called by: applications and operators through the router.
-- Raises: what the cell's geneva.create_workflow raises.
create or replace function geneva.create_workflow(
  p_workflow_type text,
  p_hero_type text,
  p_hero_id text,
  p_allow_multiple boolean default false,
  p_trace_context text default null,
  p_group text default null,
  p_idempotency_key text default null,
  p_parent_id bigint default null
)
returns bigint
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on geneva._create_hash(p_hero_type, p_hero_id, p_parent_id);
$$;

comment on function geneva.create_workflow is
'The cells'' geneva.create_workflow, run in the cell of the hero''s partition (a child: its parent''s).';
