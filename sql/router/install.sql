-- The router's code package: a database that holds no workflows and answers
-- Geneva's public functions by calling them in the cells (docs/cells.md).
--
-- `geneva migrate --router --partitions P --cells URL,URL,…` (MigrateRouter)
-- installs it in one transaction, after it has created the extension plproxy,
-- the cluster (the foreign server geneva of PL/Proxy's foreign data wrapper:
-- options p0 … p(P-1), partition i on cell i mod C, and a user mapping),
-- and, in a fresh schema geneva, the row types geneva.workflows and
-- geneva.step_executions copied from the first cell. Kept out of
-- sql/install.sql: a cell is a whole Geneva, the router is only this.
--
-- ## Inventory
--
-- One function or view a file, named after it (TestSQLShape): the public
-- ones carry the names and signatures (the views: the columns) of the
-- cells' (TestCells compares them), but cells_<view>, each cell's rows of a
-- view; _-prefixed helpers pick a partition (_hero_hash, _create_hash) or
-- run a function in every cell (_cells_*: RUN ON ALL) for a public one to
-- merge.
-- Routing:
--   by hero       create_workflow (a child: by its parent's id),
--                 send_hero_event; create_workflows, a call a cell with
--                 its share of the list (_cell_create_workflows, by the map
--                 _cells_map); create_schedule (a schedule lives in its
--                 hero's cell); pause_schedule, resume_schedule,
--                 delete_schedule (the cell that has the name,
--                 _cells_schedule_hash)
--   by id         get_workflow, pause_workflow, resume_workflow,
--                 cancel_workflow, skip_step, retry_workflow, send_event,
--                 step_history, get_step_execution, final_step_at
--   on all cells  list_workflows, count_workflows, error_classes, bulk_workflows
--                 (merged), define_workflow, define_limit (each cell's)
-- Views: workflow_counts and engine_metrics, the cells' columns, merged
-- from cells_workflow_counts and cells_engine_metrics (RUN ON ALL, each
-- cell's rows with a cell column; public, as a view's reader calls them).
-- A read of one workflow's rows of a view (its timeline, children,
-- retries, actions, awaits, blockers) calls cell_<view>(id), RUN ON the id:
-- one cell, filtered there, not every cell's whole view (goclient and the
-- dashboard do, through a router).
-- The operator verbs go through a _cell_* or _cells_* helper that passes
-- the caller (_router_actor) for the cells' action log.

{{ template "router/_hero_hash.sql" . }}
{{ template "router/_create_hash.sql" . }}
{{ template "router/_cells_map.sql" . }}
{{ template "router/_cell_create_workflows.sql" . }}
{{ template "router/_router_actor.sql" . }}
{{ template "router/create_workflow.sql" . }}
{{ template "router/create_workflows.sql" . }}
{{ template "router/_cell_send_hero_event.sql" . }}
{{ template "router/send_hero_event.sql" . }}
{{ template "router/get_workflow.sql" . }}
{{ template "router/_cell_pause_workflow.sql" . }}
{{ template "router/pause_workflow.sql" . }}
{{ template "router/_cell_resume_workflow.sql" . }}
{{ template "router/resume_workflow.sql" . }}
{{ template "router/_cell_cancel_workflow.sql" . }}
{{ template "router/cancel_workflow.sql" . }}
{{ template "router/_cell_skip_step.sql" . }}
{{ template "router/skip_step.sql" . }}
{{ template "router/_cell_retry_workflow.sql" . }}
{{ template "router/retry_workflow.sql" . }}
{{ template "router/_cell_send_event.sql" . }}
{{ template "router/send_event.sql" . }}
{{ template "router/step_history.sql" . }}
{{ template "router/get_step_execution.sql" . }}
{{ template "router/final_step_at.sql" . }}
{{ template "router/_cells_list_workflows.sql" . }}
{{ template "router/list_workflows.sql" . }}
{{ template "router/_cells_count_workflows.sql" . }}
{{ template "router/count_workflows.sql" . }}
{{ template "router/_cells_error_classes.sql" . }}
{{ template "router/error_classes.sql" . }}
{{ template "router/_cells_define_workflow.sql" . }}
{{ template "router/define_workflow.sql" . }}
{{ template "router/_cells_bulk_workflows.sql" . }}
{{ template "router/bulk_workflows.sql" . }}
{{ template "router/_cells_define_limit.sql" . }}
{{ template "router/define_limit.sql" . }}
{{ template "router/_cells_schedule_hash.sql" . }}
{{ template "router/_cell_create_schedule.sql" . }}
{{ template "router/create_schedule.sql" . }}
{{ template "router/_cell_pause_schedule.sql" . }}
{{ template "router/pause_schedule.sql" . }}
{{ template "router/_cell_resume_schedule.sql" . }}
{{ template "router/resume_schedule.sql" . }}
{{ template "router/_cell_delete_schedule.sql" . }}
{{ template "router/delete_schedule.sql" . }}
{{ template "router/cells_workflow_counts.sql" . }}
{{ template "router/workflow_counts.sql" . }}
{{ template "router/cells_engine_metrics.sql" . }}
{{ template "router/engine_metrics.sql" . }}
{{ template "router/now.sql" . }}
{{ template "router/_cell_schedule_step.sql" . }}
{{ template "router/schedule_step.sql" . }}
{{ template "router/_cells_housekeep.sql" . }}
{{ template "router/housekeep.sql" . }}
{{ template "router/_cells_get_housekeeping_settings.sql" . }}
{{ template "router/get_housekeeping_settings.sql" . }}
{{ template "router/_cells_set_housekeeping_settings.sql" . }}
{{ template "router/set_housekeeping_settings.sql" . }}
{{ template "router/cells_action_log.sql" . }}
{{ template "router/action_log.sql" . }}
{{ template "router/cell_action_log.sql" . }}
{{ template "router/cells_awaiting_events.sql" . }}
{{ template "router/awaiting_events.sql" . }}
{{ template "router/cell_awaiting_events.sql" . }}
{{ template "router/cells_definition_steps.sql" . }}
{{ template "router/definition_steps.sql" . }}
{{ template "router/cells_definition_versions.sql" . }}
{{ template "router/definition_versions.sql" . }}
{{ template "router/cells_event_stats.sql" . }}
{{ template "router/event_stats.sql" . }}
{{ template "router/cells_limit_usage.sql" . }}
{{ template "router/limit_usage.sql" . }}
{{ template "router/cells_orphan_workflows.sql" . }}
{{ template "router/orphan_workflows.sql" . }}
{{ template "router/cells_paused_workflows.sql" . }}
{{ template "router/paused_workflows.sql" . }}
{{ template "router/cells_queue_lag.sql" . }}
{{ template "router/queue_lag.sql" . }}
{{ template "router/cells_runaway_workflows.sql" . }}
{{ template "router/runaway_workflows.sql" . }}
{{ template "router/cells_schedule_firing_list.sql" . }}
{{ template "router/schedule_firing_list.sql" . }}
{{ template "router/cells_schedule_list.sql" . }}
{{ template "router/schedule_list.sql" . }}
{{ template "router/cells_step_errors.sql" . }}
{{ template "router/step_errors.sql" . }}
{{ template "router/cells_step_stats.sql" . }}
{{ template "router/step_stats.sql" . }}
{{ template "router/cells_step_throughput.sql" . }}
{{ template "router/step_throughput.sql" . }}
{{ template "router/cells_stuck_executions.sql" . }}
{{ template "router/stuck_executions.sql" . }}
{{ template "router/cells_workflow_blockers.sql" . }}
{{ template "router/workflow_blockers.sql" . }}
{{ template "router/cell_workflow_blockers.sql" . }}
{{ template "router/cells_workflow_children.sql" . }}
{{ template "router/workflow_children.sql" . }}
{{ template "router/cell_workflow_children.sql" . }}
{{ template "router/cells_workflow_list.sql" . }}
{{ template "router/workflow_list.sql" . }}
{{ template "router/cell_workflow_list.sql" . }}
{{ template "router/cells_workflow_timeline.sql" . }}
{{ template "router/workflow_timeline.sql" . }}
{{ template "router/cell_workflow_timeline.sql" . }}
{{ template "router/grants.sql" . }}
