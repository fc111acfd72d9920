-- The router's roles and privileges (docs/cells.md): the same four roles as
-- a cell's (sql/grants.sql), each granted the router's functions of the
-- names it is granted in a cell. The router's public functions are security
-- definers: the cells are reached through the owner's user mapping of the
-- server geneva, and no role but the owner has USAGE on it.

select
  pg_catalog.set_config('geneva.role_app', {{ .role_app_name }}, true),
  pg_catalog.set_config('geneva.role_operator', {{ .role_operator_name }}, true),
  pg_catalog.set_config('geneva.role_worker', {{ .role_worker_name }}, true),
  pg_catalog.set_config('geneva.role_reader', {{ .role_reader_name }}, true);

do $$
declare
  v_role text;
begin
  foreach v_role in array array[
    pg_catalog.current_setting('geneva.role_app'),
    pg_catalog.current_setting('geneva.role_operator'),
    pg_catalog.current_setting('geneva.role_worker'),
    pg_catalog.current_setting('geneva.role_reader')
  ] loop
    if not exists (select from pg_catalog.pg_roles r where r.rolname = v_role) then
      execute pg_catalog.format('create role %I nologin', v_role);
    end if;
  end loop;
end;
$$;

revoke all on all functions in schema geneva
from public, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }}, {{ .role_reader }};
revoke all on schema geneva
from public, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }}, {{ .role_reader }};
grant usage on schema geneva
to {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }}, {{ .role_reader }};

grant execute on function
  geneva.get_workflow,
  geneva.list_workflows,
  geneva.count_workflows,
  geneva.step_history,
  geneva.get_step_execution,
  geneva.final_step_at,
  geneva.cells_workflow_counts,
  geneva.cells_engine_metrics
to {{ .role_reader }}, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }};

-- The views, merged from the cells (a reader of a view calls its
-- functions, cells_*, granted above).
grant select on
  geneva.workflow_counts,
  geneva.engine_metrics
to {{ .role_reader }}, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }};

grant execute on function
  geneva.create_workflow,
  geneva.create_workflows,
  geneva.send_event,
  geneva.send_hero_event
to {{ .role_app }}, {{ .role_operator }};

grant execute on function
  geneva.pause_workflow,
  geneva.resume_workflow,
  geneva.cancel_workflow,
  geneva.skip_step,
  geneva.retry_workflow,
  geneva.bulk_workflows,
  geneva.define_limit,
  geneva.create_schedule,
  geneva.pause_schedule,
  geneva.resume_schedule,
  geneva.delete_schedule
to {{ .role_operator }};

-- Workers (deployers): a definition in every cell. Not operators: the cells
-- see the router's user, so an operator's HTTP-only rule would not hold.
grant execute on function
  geneva.define_workflow
to {{ .role_worker }};
