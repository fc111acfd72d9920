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
  geneva.error_classes,
  geneva.step_history,
  geneva.get_step_execution,
  geneva.final_step_at,
  geneva.cells_workflow_counts,
  geneva.cells_engine_metrics,
  geneva.cells_action_log,
  geneva.cells_awaiting_events,
  geneva.cells_definition_steps,
  geneva.cells_definition_versions,
  geneva.cells_event_stats,
  geneva.cells_limit_usage,
  geneva.cells_orphan_workflows,
  geneva.cells_paused_workflows,
  geneva.cells_queue_lag,
  geneva.cells_runaway_workflows,
  geneva.cells_schedule_firing_list,
  geneva.cells_schedule_list,
  geneva.cells_step_errors,
  geneva.cells_step_stats,
  geneva.cells_step_throughput,
  geneva.cells_stuck_executions,
  geneva.cells_workflow_blockers,
  geneva.cells_workflow_children,
  geneva.cells_workflow_list,
  geneva.cells_workflow_timeline,
  geneva.cell_workflow_timeline,
  geneva.cell_workflow_children,
  geneva.cell_workflow_list,
  geneva.cell_action_log,
  geneva.cell_awaiting_events,
  geneva.cell_workflow_blockers,
  geneva.now,
  geneva.get_housekeeping_settings
to {{ .role_reader }}, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }};

-- The views, merged from the cells (a reader of a view calls its
-- functions, cells_*, granted above).
grant select on
  geneva.workflow_counts,
  geneva.engine_metrics,
  geneva.action_log,
  geneva.awaiting_events,
  geneva.definition_steps,
  geneva.definition_versions,
  geneva.event_stats,
  geneva.limit_usage,
  geneva.orphan_workflows,
  geneva.paused_workflows,
  geneva.queue_lag,
  geneva.runaway_workflows,
  geneva.schedule_firing_list,
  geneva.schedule_list,
  geneva.step_errors,
  geneva.step_stats,
  geneva.step_throughput,
  geneva.stuck_executions,
  geneva.workflow_blockers,
  geneva.workflow_children,
  geneva.workflow_list,
  geneva.workflow_timeline
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
  geneva.schedule_step,
  geneva.bulk_workflows,
  geneva.housekeep,
  geneva.set_housekeeping_settings,
  geneva.define_limit,
  geneva.create_schedule,
  geneva.pause_schedule,
  geneva.resume_schedule,
  geneva.delete_schedule
to {{ .role_operator }};

-- Workers and operators (deployers): a definition in every cell. The
-- router holds the cells' rule that an operator defines only HTTP-only
-- types (its define_workflow checks the caller: the cells see the router's
-- user).
grant execute on function
  geneva.define_workflow
to {{ .role_operator }}, {{ .role_worker }};
