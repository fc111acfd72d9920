-- geneva._cells_define_workflow: every cell's geneva.define_workflow, on
-- the router (docs/cells.md).
--
-- RUN ON ALL: each cell once, in parallel, a row each (define_workflow
-- returns nothing; a set of rows is what PL/Proxy gathers from several
-- cells).
--
-- Called by: the router's define_workflow.
-- Raises: what the cells' geneva.define_workflow raises.
create or replace function geneva._cells_define_workflow(p_workflow_type text, p_definition jsonb)
returns setof integer
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  select 1 from geneva.define_workflow(p_workflow_type, p_definition);
$$;
