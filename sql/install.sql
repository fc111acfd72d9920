-- Geneva's code package: every function, trigger and view of the engine.
--
-- `geneva migrate` installs it in one transaction after the numbered
-- migrations, every time, so a database is upgraded in place; the single-file
-- psql install (dist/geneva.sql) embeds it. Everything here is idempotent
-- (create or replace; a CHECK constraint of constraints/ is attached when
-- its table lacks it), written once, and depends only on the tables of
-- migrations/ and on River's public.river_job.
--
-- Files are included as Go templates (tern code packages): keep double curly
-- braces out of SQL. The template data are the role names of sql/grants.sql.

-- Graveyard: after the first tagged release, drops of removed functions and
-- changed signatures go here, oldest first, so that upgraded databases lose
-- them. Before it there is none: development databases are recreated
-- (migrations/README.md).

-- Clock and private helpers, in dependency order.
{{ template "functions/now.sql" . }}
{{ template "functions/_signal_effects.sql" . }}
{{ template "functions/_check_wait.sql" . }}
{{ template "functions/_check_length.sql" . }}
{{ template "functions/_check_lengths.sql" . }}
{{ template "functions/allow_fake_clock.sql" . }}
{{ template "functions/_parse_wait.sql" . }}
{{ template "functions/_validate_policy.sql" . }}
{{ template "functions/_definition.sql" . }}
{{ template "functions/_lock_workflow.sql" . }}
{{ template "functions/_lock_execution.sql" . }}
{{ template "functions/_lock_active_execution.sql" . }}
{{ template "functions/_lock_executions.sql" . }}
{{ template "functions/_notify_insert.sql" . }}
{{ template "functions/_job_waits.sql" . }}
{{ template "functions/_step_job_args.sql" . }}
{{ template "functions/_step_job_available.sql" . }}
{{ template "functions/_enqueue_step.sql" . }}
{{ template "functions/_ensure_job.sql" . }}
{{ template "functions/_limited.sql" . }}
{{ template "functions/_limit_key.sql" . }}
{{ template "functions/_limit_keys.sql" . }}
{{ template "functions/_concurrency_key.sql" . }}
{{ template "functions/_limit_lock.sql" . }}
{{ template "functions/_limit_capacity.sql" . }}
{{ template "functions/_limit_take.sql" . }}
{{ template "functions/_limit_carries.sql" . }}
{{ template "functions/_limit_wait_behind.sql" . }}
{{ template "functions/_unconditional.sql" . }}
{{ template "functions/_limit_release.sql" . }}
{{ template "functions/_limit_next.sql" . }}
{{ template "functions/_limit_admit.sql" . }}
{{ template "functions/_schedule_step.sql" . }}
{{ template "functions/_next_attempt.sql" . }}
{{ template "functions/_duration_bucket.sql" . }}
{{ template "functions/_end_executions.sql" . }}
{{ template "functions/_end_execution.sql" . }}
{{ template "functions/_end_as.sql" . }}
{{ template "functions/_complete_job.sql" . }}
{{ template "functions/_check_job.sql" . }}
{{ template "functions/_advance_many.sql" . }}
{{ template "functions/_advance.sql" . }}
{{ template "functions/_resolve_policy.sql" . }}
{{ template "functions/_backoff_wait.sql" . }}
{{ template "functions/_recover_execution.sql" . }}
{{ template "functions/_repair_orphan.sql" . }}
{{ template "functions/_histogram_add.sql" . }}
{{ template "functions/_ended_counts_from.sql" . }}
{{ template "functions/_log_action.sql" . }}
{{ template "functions/_action_result.sql" . }}

-- Definitions and workflows.
{{ template "functions/_validate_limit.sql" . }}
{{ template "functions/_validate_http.sql" . }}
{{ template "functions/_step_queue.sql" . }}
{{ template "functions/_step_http.sql" . }}
{{ template "functions/define_workflow.sql" . }}
{{ template "functions/define_limit.sql" . }}
{{ template "functions/create_workflows.sql" . }}
{{ template "functions/create_workflow.sql" . }}
{{ template "functions/pause_workflow.sql" . }}
{{ template "functions/resume_workflow.sql" . }}
{{ template "functions/cancel_workflow.sql" . }}
{{ template "functions/skip_step.sql" . }}
{{ template "functions/schedule_step.sql" . }}
{{ template "functions/get_workflow.sql" . }}
{{ template "functions/list_workflows.sql" . }}
{{ template "functions/step_history.sql" . }}
{{ template "functions/get_step_execution.sql" . }}
{{ template "functions/retry_workflow.sql" . }}
{{ template "functions/bulk_workflows.sql" . }}

-- Events.
{{ template "functions/_check_event.sql" . }}
{{ template "functions/_send_event.sql" . }}
{{ template "functions/send_event.sql" . }}
{{ template "functions/send_hero_event.sql" . }}

-- Schedules.
{{ template "functions/_cron_field.sql" . }}
{{ template "functions/_cron_parse.sql" . }}
{{ template "functions/_cron_instant.sql" . }}
{{ template "functions/_cron_next.sql" . }}
{{ template "functions/_cron_latest.sql" . }}
{{ template "functions/_check_timezone.sql" . }}
{{ template "functions/_lock_schedule.sql" . }}
{{ template "functions/create_schedule.sql" . }}
{{ template "functions/pause_schedule.sql" . }}
{{ template "functions/resume_schedule.sql" . }}
{{ template "functions/delete_schedule.sql" . }}
{{ template "functions/fire_schedules.sql" . }}

-- Worker protocol.
{{ template "functions/start_step.sql" . }}
{{ template "functions/_end_running_refuse.sql" . }}
{{ template "functions/_end_running.sql" . }}
{{ template "functions/complete_step.sql" . }}
{{ template "functions/complete_and_continue.sql" . }}
{{ template "functions/complete_steps.sql" . }}
{{ template "functions/start_steps.sql" . }}
{{ template "functions/fail_step.sql" . }}
{{ template "functions/checkpoint_step.sql" . }}
{{ template "functions/parse_wait.sql" . }}
{{ template "functions/interrupt_step.sql" . }}
{{ template "functions/heartbeat_step.sql" . }}
{{ template "functions/step_defined.sql" . }}

-- Housekeeping and heroes.
{{ template "functions/_fold_workflow_counts.sql" . }}
{{ template "functions/_fold_ended_executions.sql" . }}
{{ template "functions/_housekeeping_settings.sql" . }}
{{ template "functions/_check_housekeeping_settings.sql" . }}
{{ template "functions/get_housekeeping_settings.sql" . }}
{{ template "functions/set_housekeeping_settings.sql" . }}
{{ template "functions/housekeep.sql" . }}
{{ template "functions/housekeep_if_due.sql" . }}
{{ template "functions/_hero_id_column.sql" . }}
{{ template "triggers/hero_deleted.sql" . }}
{{ template "functions/_hero_trigger_name.sql" . }}
{{ template "functions/track_hero.sql" . }}
{{ template "functions/untrack_hero.sql" . }}

-- The CHECK constraints whose rules are a function's, each attached once.
{{ template "constraints/workflows_state_valid.sql" . }}
{{ template "constraints/step_executions_state_valid.sql" . }}

-- Guards of the state machine against hand-written SQL.
{{ template "triggers/workflows_guard_state.sql" . }}
{{ template "triggers/step_executions_guard_state.sql" . }}
{{ template "triggers/workflows_guard_columns.sql" . }}
{{ template "triggers/step_executions_guard_columns.sql" . }}
{{ template "triggers/step_executions_guard_ended.sql" . }}
{{ template "triggers/workflows_guard_insert.sql" . }}
{{ template "triggers/workflows_guard_delete.sql" . }}
{{ template "triggers/step_executions_guard_insert.sql" . }}
{{ template "triggers/step_executions_guard_delete.sql" . }}
{{ template "triggers/workflows_count_ended.sql" . }}
{{ template "triggers/workflows_count_inserted.sql" . }}
{{ template "triggers/workflows_count_deleted.sql" . }}
{{ template "triggers/step_executions_count_inserted.sql" . }}
{{ template "triggers/counts_guard.sql" . }}
{{ template "triggers/workflow_definitions_guard.sql" . }}
{{ template "triggers/truncate_guard.sql" . }}
{{ template "triggers/housekeeping_settings_guard.sql" . }}
{{ template "triggers/events_guard.sql" . }}
{{ template "triggers/limits_guard.sql" . }}
{{ template "triggers/schedules_guard.sql" . }}
{{ template "triggers/schedule_firings_guard.sql" . }}
{{ template "triggers/operator_actions_guard.sql" . }}
{{ template "triggers/idempotency_keys_guard.sql" . }}

-- Views, last.
{{ template "views/workflow_counts.sql" . }}
{{ template "views/paused_workflows.sql" . }}
{{ template "views/orphan_workflows.sql" . }}
{{ template "views/stuck_executions.sql" . }}
{{ template "views/workflow_timeline.sql" . }}
{{ template "views/step_stats.sql" . }}
{{ template "views/workflow_list.sql" . }}
{{ template "views/step_errors.sql" . }}
{{ template "views/definition_steps.sql" . }}
{{ template "views/definition_versions.sql" . }}
{{ template "views/step_throughput.sql" . }}
{{ template "views/queue_lag.sql" . }}
{{ template "views/engine_metrics.sql" . }}
{{ template "views/awaiting_events.sql" . }}
{{ template "views/event_stats.sql" . }}
{{ template "views/limit_usage.sql" . }}
{{ template "views/schedule_list.sql" . }}
{{ template "views/schedule_firing_list.sql" . }}
{{ template "views/action_log.sql" . }}

-- Roles and privileges, after everything they name.
{{ template "grants.sql" . }}
