-- geneva._router_actor(): who a call through the router is made by, for the
-- cells' action log (docs/cells.md).
--
-- A cell records performed_by as its session_user, which through the router
-- is the router's user (the user mapping's), whoever called. The router's
-- verbs therefore pass this name to the cell, which sets it as geneva.actor
-- for the call: the router caller's login role (session_user: the verbs run
-- as the owner), the fact the cell cannot see, and after it " as " and the
-- caller's own geneva.actor when set (the dashboard's signed-in user: a
-- claim, which never replaces the role: a caller could set any name). The
-- cell refuses the two together over 255 bytes (22001), as it refuses a
-- longer geneva.actor.
--
-- Called by: the router's operator verbs (bulk_workflows, define_limit, the
-- schedule verbs, pause_workflow, ...).
-- It has no `set search_path`, so that the planner can inline it: every name
-- is qualified.
create or replace function geneva._router_actor()
returns text
language sql
stable
as $$
  select session_user::text
    operator(pg_catalog.||) coalesce(' as ' operator(pg_catalog.||) nullif(pg_catalog.current_setting('geneva.actor', true), ''), '')
$$;
