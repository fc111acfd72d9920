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
--
-- ## Inventory
--
-- Folders: one function (or view, or trigger with its function) a file,
-- named after it (TestSQLShape holds every rule below).
--   api/          the public functions of applications and operators (any
--                 SQL client): security definer, granted in grants.sql
--   protocol/     the public functions of the worker protocol (any language)
--   engine/       the one path: the claim's and the end's parts, the move of
--                 a workflow, scheduling and River's jobs, locks, outcomes
--                 (_signal_effects) and exception policies
--   verbs/        the operators' verbs' one implementations (their public
--                 functions in api/ are wrappers), the workflow filter, the
--                 action log
--   checks/       argument and definition checks: lengths, waits, JSON
--                 depth, policies, HTTP steps
--   limits/       concurrency and rate limits
--   events/       events sent to workflows
--   children/     fan-out and fan-in: a parent's counts, its join, the
--                 cascade of its cancel (docs/children.md)
--   schedules/    cron schedules
--   housekeeping/ recovery of stuck executions, repair, runaway flags,
--                 settings
--   counts/       the counters the views read, kept by triggers, folded by
--                 housekeeping
--   history/      ended workflows moved out of the live tables into history
--                 partitions, and those partitions' upkeep (docs/history.md)
--   heroes/       the trigger track_hero attaches to an application's table
--   guards/       triggers refusing the writes no function does
--   constraints/  CHECK constraints whose rules are a function's
--   views/        dashboards' views
--   cell/         not included here: in a cell (docs/cells.md), Migrate
--                 adds them after this package, in its transaction; each
--                 replaces the helper of its name (engine/_workflow_id,
--                 engine/_execution_id) so that ids carry their partition
--   router/       not included here: a router's whole package, with its
--                 own install.sql (its inventory) and grants.sql
--   Public functions (no leading _) live in api/ and protocol/ only; helpers
--   (_name) and trigger functions (_trg_name) everywhere else.
--
-- Entry points, by subsystem:
--   create        api/create_workflows (create_workflow is a list of one)
--   claim         protocol/start_steps, the one claim (start_step: one)
--   end           engine/_end_running, behind complete_steps, complete_step,
--                 complete_and_continue, interrupt_step and fail_step (a
--                 failure's effect: engine/_exception_effect)
--   move          engine/_advance_many, every move of a workflow (_advance:
--                 one)
--   next step     engine/_insert_execution: one execution inserted,
--                 scheduled, with its job (create of one, resume,
--                 schedule_step's run-now, retry); engine/_advance_many:
--                 set-wise (every move, a list's creation). "Schedule" is
--                 otherwise the cron schedules' (schedules/, fire_schedules),
--                 the operator's schedule_step and an execution's
--                 scheduled_for (bench/NOTES.md, "Scheduling named once")
--   verbs         verbs/_pause_workflow, _resume_workflow, _cancel_workflow,
--                 _skip_step, _retry_workflow; api/bulk_workflows
--   limits        limits/_limit_admit (at a claim), limits/_limit_next and
--                 limits/_limit_release (at an end), limits/_limit_wait_behind
--                 (a step scheduled behind a full key)
--   events        api/send_event, api/send_hero_event (events/_send_event);
--                 the await is the claim's and the move's
--   schedules     api/fire_schedules
--   children      api/create_workflows (p_parent_id); a child's end: the
--                 trigger counts/workflows_ended (every end, whoever ends
--                 it: a child's on its stripe, children/_children_ended a
--                 canceled parent's), children/_child_ended (the parent's
--                 lock and join, when they may be needed),
--                 children/_children_count (a creation), children/_children_join
--                 (also at a join's claim, start_steps); a running step's
--                 children, with its end: children/_start_children (from
--                 engine/_end_running)
--   housekeeping  protocol/housekeep_if_due, api/housekeep
--
-- Tables (migrations/001_create_schema.sql): workflow_definitions and
-- workflow_definition_versions; workflows; step_executions; events;
-- idempotency_keys; operator_actions (the action log); limits, limit_keys,
-- limit_slots, limit_windows; queue_notifications (when each River queue was
-- last woken); schedules, schedule_firings; housekeeping_settings,
-- housekeeping_rounds; runaways (housekeeping's runaway flags);
-- children_stripes (a parent's children counted by stripe); the
-- counters ended_workflow_counts,
-- ended_workflow_count_deltas, ended_execution_deltas,
-- ended_executions_by_minute, ended_executions_by_hour; history
-- (docs/history.md): workflows_history, step_executions_history,
-- events_history (partitioned by the day a workflow ended),
-- history_counts and history_event_counts (what history holds, folded by
-- day). No role but the
-- owner may touch any; the guards refuse what no function does, even the
-- owner's hand-written SQL.
--
-- Capability flags: transaction-local settings a function turns on around
-- the write it may make and off after; a guard trigger (or a constraint)
-- refuses the write without it (55000). A hand-written write meets them.
--   geneva.inserting    create_workflows, _advance_many, _insert_execution,
--                       _retry_workflow: an ongoing workflow or an active
--                       execution inserted (workflows_guard_insert,
--                       step_executions_guard_insert, idempotency_keys_guard)
--   geneva.ending       _end_executions: an execution ended
--                       (step_executions_guard_state, counts_guard)
--   geneva.defining     define_workflow (workflow_definitions_guard)
--   geneva.moving       _move_to_history: ended workflows moved into history,
--                       their counts and events' counts folded;
--                       _history_event_counts_fill (history_guard)
--   geneva.retention    housekeep: ended history deleted; _move_to_history:
--                       moved rows deleted from the live tables;
--                       _history_forget: history_counts and
--                       history_event_counts deleted
--                       (history_guard, workflows_guard_delete, step_executions_guard_delete,
--                       events_guard, idempotency_keys_guard,
--                       operator_actions_guard)
--   geneva.folding      _fold_workflow_counts, _fold_ended_executions,
--                       _history_retention (a dropped partition's counts)
--                       (counts_guard)
--   geneva.limiting     define_limit, housekeep, _limit_admit, _limit_release
--                       (limits_guard)
--   geneva.scheduling   create_schedule, pause_schedule, resume_schedule,
--                       delete_schedule, fire_schedules (schedules_guard,
--                       schedule_firings_guard)
--   geneva.sending      _send_event (events_guard)
--   geneva.consuming    start_steps: an event consumed (events_guard)
--   geneva.logging      _log_action (operator_actions_guard)
--   geneva.housekeeping_settings  set_housekeeping_settings,
--                       _housekeeping_settings (housekeeping_settings_guard)
--   geneva.housekeeping_rounds    housekeep_if_due, housekeep (the runaway
--                       check's mark) (housekeeping_rounds_guard)
--   geneva.flagging     housekeep: runaway flags written (runaways_guard)
-- Other settings: geneva.fake_now (the test clock, honoured only where the
-- owner ran allow_fake_clock(true)); geneva.actor (who the caller says it
-- is, recorded by _log_action).
--
-- Hot path: the functions every claim and end runs through hold their
-- statements to index lookups by id, planned once per session, whatever the
-- tables' statistics said when they were planned (set plan_cache_mode =
-- force_generic_plan, enable_seqscan, enable_hashjoin and enable_mergejoin
-- off; bench/NOTES.md, "After batching", item 4): a statement planned while
-- the tables were nearly empty would otherwise keep sequential scans and
-- hash joins at several times the cost. The helpers they call run under
-- their settings (a function's own settings cost a save and a restore at
-- every call). These functions, and no others, carry the settings:
-- hot path: start_steps, create_workflows, _lock_executions, _end_running,
-- _end_executions, _advance, _limit_release

-- Graveyard: after the first tagged release, drops of removed functions and
-- changed signatures go here, oldest first, so that upgraded databases lose
-- them. Before it, development databases are recreated
-- (migrations/README.md); only a signature that gained an argument with a
-- default is dropped here, since its old overload would make every call
-- that omits the argument ambiguous.
-- event keys and start on an event (issue 49)
drop function if exists geneva.send_event(bigint, text, jsonb);
drop function if exists geneva.send_hero_event(text, text, text, jsonb);
drop function if exists geneva._send_event(geneva.workflows, text, jsonb);
drop function if exists geneva._check_event(text, jsonb);
-- an await since its wait (issue 49)
drop function if exists geneva._insert_execution(
  geneva.workflows, geneva.workflow_definitions, text, timestamptz, boolean, integer, jsonb, bigint, boolean, bigint
);

-- A cell's ids carry their partition through its own geneva._workflow_id
-- and _execution_id (cell/, docs/cells.md), which geneva migrate puts back
-- after this package (setting geneva.installing_cell): this package alone
-- (dist/geneva.sql in psql) would put back a single database's, and the
-- cell's new ids would route nowhere. Refused.
do $$
begin
  if pg_catalog.obj_description(pg_catalog.to_regprocedure('geneva._workflow_id(text, text, bigint)'), 'pg_proc') like 'cell of %'
     and pg_catalog.current_setting('geneva.installing_cell', true) is distinct from 'on' then
    raise exception 'this database is a cell (docs/cells.md): upgrade it with geneva migrate, which keeps its ids'' partitions'
      using errcode = '55000';
  end if;
end;
$$;

-- A database made from an earlier migrations/001_create_schema.sql (tern
-- records version 1 either way: migrations/README.md) lacks the tables 001
-- gained since; named here rather than failing on the first object that
-- reads one.
do $$
begin
  if pg_catalog.to_regclass('geneva.history_event_counts') is null then
    raise exception 'geneva.history_event_counts is missing: this database was made by an earlier migrations/001_create_schema.sql'
      using errcode = '55000',
            hint = 'Recreate a development database (migrations/README.md), or create the table as migrations/001_create_schema.sql does and install again: the install folds the events already in history.';
  end if;
end;
$$;

-- Clock and private helpers, in dependency order.
{{ template "api/now.sql" . }}
{{ template "engine/_signal_effects.sql" . }}
{{ template "checks/_check_wait.sql" . }}
{{ template "checks/_check_length.sql" . }}
{{ template "checks/_check_lengths.sql" . }}
{{ template "checks/_check_json_depth.sql" . }}
{{ template "api/allow_fake_clock.sql" . }}
{{ template "checks/_parse_wait.sql" . }}
{{ template "checks/_validate_policy.sql" . }}
{{ template "engine/_definition.sql" . }}
{{ template "engine/_lock_workflow.sql" . }}
{{ template "engine/_lock_execution.sql" . }}
{{ template "engine/_lock_active_execution.sql" . }}
{{ template "engine/_lock_executions.sql" . }}
{{ template "engine/_notify_insert.sql" . }}
{{ template "engine/_job_waits.sql" . }}
{{ template "engine/_step_job_args.sql" . }}
{{ template "engine/_step_job_available.sql" . }}
{{ template "engine/_enqueue_step.sql" . }}
{{ template "engine/_ensure_job.sql" . }}
{{ template "limits/_limited.sql" . }}
{{ template "limits/_limit_key.sql" . }}
{{ template "limits/_limit_keys.sql" . }}
{{ template "limits/_concurrency_key.sql" . }}
{{ template "limits/_limit_lock.sql" . }}
{{ template "limits/_limit_capacity.sql" . }}
{{ template "limits/_limit_take.sql" . }}
{{ template "limits/_limit_carries.sql" . }}
{{ template "limits/_limit_wait_behind.sql" . }}
{{ template "engine/_unconditional.sql" . }}
{{ template "limits/_limit_release.sql" . }}
{{ template "limits/_limit_next.sql" . }}
{{ template "limits/_limit_admit.sql" . }}
{{ template "children/_await_name.sql" . }}
{{ template "children/_children_ongoing.sql" . }}
{{ template "children/_children_ended_now.sql" . }}
{{ template "children/_workflow_now.sql" . }}
{{ template "engine/_workflow_id.sql" . }}
{{ template "engine/_execution_id.sql" . }}
{{ template "events/_await_names.sql" . }}
{{ template "events/_await_after.sql" . }}
{{ template "engine/_insert_execution.sql" . }}
{{ template "engine/_next_attempt.sql" . }}
{{ template "counts/_duration_bucket.sql" . }}
{{ template "engine/_end_executions.sql" . }}
{{ template "engine/_end_execution.sql" . }}
{{ template "engine/_end_as.sql" . }}
{{ template "engine/_complete_job.sql" . }}
{{ template "engine/_check_job.sql" . }}
{{ template "engine/_advance_many.sql" . }}
{{ template "engine/_final_step_at.sql" . }}
{{ template "engine/_advance.sql" . }}
{{ template "engine/_resolve_policy.sql" . }}
{{ template "engine/_backoff_wait.sql" . }}
{{ template "engine/_exception_reattempts.sql" . }}
{{ template "engine/_exception_effect.sql" . }}
{{ template "housekeeping/_recover_execution.sql" . }}
{{ template "housekeeping/_repair_orphan.sql" . }}
{{ template "counts/_histogram_add.sql" . }}
{{ template "counts/_ended_counts_from.sql" . }}
{{ template "verbs/_log_action.sql" . }}
{{ template "verbs/_action_result.sql" . }}

-- Definitions and workflows.
{{ template "limits/_validate_limit.sql" . }}
{{ template "checks/_validate_http.sql" . }}
{{ template "engine/_step_queue.sql" . }}
{{ template "engine/_step_wait.sql" . }}
{{ template "engine/_step_http.sql" . }}
{{ template "checks/_check_event_await.sql" . }}
{{ template "api/define_workflow.sql" . }}
{{ template "api/define_limit.sql" . }}
{{ template "api/create_workflows.sql" . }}
{{ template "api/create_workflow.sql" . }}
{{ template "verbs/_pause_workflow.sql" . }}
{{ template "api/pause_workflow.sql" . }}
{{ template "verbs/_resume_workflow.sql" . }}
{{ template "api/resume_workflow.sql" . }}
{{ template "verbs/_cancel_workflow.sql" . }}
{{ template "api/cancel_workflow.sql" . }}
{{ template "verbs/_skip_step.sql" . }}
{{ template "api/skip_step.sql" . }}
{{ template "api/schedule_step.sql" . }}
{{ template "api/get_workflow.sql" . }}
{{ template "api/final_step_at.sql" . }}
{{ template "verbs/_workflow_filter.sql" . }}
{{ template "api/list_workflows.sql" . }}
{{ template "api/count_workflows.sql" . }}
{{ template "api/error_classes.sql" . }}
{{ template "api/step_history.sql" . }}
{{ template "api/get_step_execution.sql" . }}
{{ template "verbs/_retry_workflow.sql" . }}
{{ template "api/retry_workflow.sql" . }}
{{ template "api/bulk_workflows.sql" . }}

-- Events.
{{ template "events/_check_event.sql" . }}
{{ template "events/_send_event.sql" . }}
{{ template "api/send_event.sql" . }}
{{ template "api/send_hero_event.sql" . }}

-- Children.
{{ template "children/_check_children_await.sql" . }}
{{ template "children/_children_join.sql" . }}
{{ template "children/_partial_join.sql" . }}
{{ template "children/_children_count.sql" . }}
{{ template "children/_child_ended.sql" . }}
{{ template "children/_start_children.sql" . }}

-- Schedules.
{{ template "schedules/_cron_field.sql" . }}
{{ template "schedules/_cron_parse.sql" . }}
{{ template "schedules/_cron_instant.sql" . }}
{{ template "schedules/_cron_next.sql" . }}
{{ template "schedules/_cron_previous.sql" . }}
{{ template "schedules/_check_timezone.sql" . }}
{{ template "schedules/_lock_schedule.sql" . }}
{{ template "api/create_schedule.sql" . }}
{{ template "api/pause_schedule.sql" . }}
{{ template "api/resume_schedule.sql" . }}
{{ template "api/delete_schedule.sql" . }}
{{ template "api/fire_schedules.sql" . }}

-- Worker protocol.
{{ template "protocol/start_step.sql" . }}
{{ template "engine/_end_running_refuse.sql" . }}
{{ template "engine/_end_running.sql" . }}
{{ template "protocol/complete_step.sql" . }}
{{ template "protocol/complete_and_continue.sql" . }}
{{ template "protocol/complete_steps.sql" . }}
{{ template "protocol/start_steps.sql" . }}
{{ template "protocol/fail_step.sql" . }}
{{ template "protocol/checkpoint_step.sql" . }}
{{ template "protocol/parse_wait.sql" . }}
{{ template "protocol/interrupt_step.sql" . }}
{{ template "protocol/heartbeat_step.sql" . }}
{{ template "protocol/step_defined.sql" . }}

-- Housekeeping and heroes.
{{ template "counts/_fold_workflow_counts.sql" . }}
{{ template "counts/_fold_ended_executions.sql" . }}
{{ template "housekeeping/_housekeeping_settings.sql" . }}
{{ template "housekeeping/_check_housekeeping_settings.sql" . }}
{{ template "api/get_housekeeping_settings.sql" . }}
{{ template "api/set_housekeeping_settings.sql" . }}
{{ template "housekeeping/_flag_runaways.sql" . }}
{{ template "history/_history_bounds.sql" . }}
{{ template "history/_history_partition.sql" . }}
{{ template "history/_move_to_history.sql" . }}
{{ template "history/_move_ended.sql" . }}
{{ template "history/_history_ahead.sql" . }}
{{ template "history/_history_forget.sql" . }}
{{ template "history/_history_retention.sql" . }}
{{ template "history/_history_event_counts_fill.sql" . }}
{{ template "history/_archive_partition.sql" . }}
{{ template "history/_archive_horizon.sql" . }}
{{ template "api/archive_partitions.sql" . }}
{{ template "api/archive_partition_rows.sql" . }}
{{ template "api/drop_archived_partition.sql" . }}
{{ template "api/housekeep.sql" . }}
{{ template "protocol/housekeep_if_due.sql" . }}
{{ template "heroes/_hero_id_column.sql" . }}
{{ template "heroes/hero_deleted.sql" . }}
{{ template "heroes/_hero_trigger_name.sql" . }}
{{ template "api/track_hero.sql" . }}
{{ template "api/untrack_hero.sql" . }}

-- The CHECK constraints whose rules are a function's, each attached once.
{{ template "constraints/workflows_state_valid.sql" . }}
{{ template "constraints/step_executions_state_valid.sql" . }}

-- Guards of the state machine against hand-written SQL.
{{ template "guards/workflows_guard_state.sql" . }}
{{ template "guards/step_executions_guard_state.sql" . }}
{{ template "guards/workflows_guard_columns.sql" . }}
{{ template "guards/step_executions_guard_columns.sql" . }}
{{ template "guards/step_executions_guard_ended.sql" . }}
{{ template "guards/step_executions_guard_times.sql" . }}
{{ template "guards/workflows_guard_insert.sql" . }}
{{ template "guards/workflows_guard_delete.sql" . }}
{{ template "guards/step_executions_guard_insert.sql" . }}
{{ template "guards/step_executions_guard_delete.sql" . }}
{{ template "children/_children_ended.sql" . }}
{{ template "counts/workflows_ended.sql" . }}
{{ template "counts/workflows_count_inserted.sql" . }}
{{ template "counts/step_executions_count_inserted.sql" . }}
{{ template "guards/counts_guard.sql" . }}
{{ template "guards/workflow_definitions_guard.sql" . }}
{{ template "guards/truncate_guard.sql" . }}
{{ template "guards/housekeeping_settings_guard.sql" . }}
{{ template "guards/housekeeping_rounds_guard.sql" . }}
{{ template "guards/events_guard.sql" . }}
{{ template "guards/limits_guard.sql" . }}
{{ template "guards/schedules_guard.sql" . }}
{{ template "guards/schedule_firings_guard.sql" . }}
{{ template "guards/operator_actions_guard.sql" . }}
{{ template "guards/idempotency_keys_guard.sql" . }}
{{ template "guards/runaways_guard.sql" . }}
{{ template "guards/history_guard.sql" . }}

-- History moved before the move folded its events (an earlier Geneva's):
-- folded now, once (geneva._history_event_counts_fill: idempotent).
do $$
begin
  perform geneva._history_event_counts_fill();
end;
$$;

-- Views, last.
{{ template "views/_workflows_all.sql" . }}
{{ template "views/_step_executions_all.sql" . }}
{{ template "views/_events_all.sql" . }}
{{ template "views/_step_errors.sql" . }}
{{ template "views/workflow_counts.sql" . }}
{{ template "views/paused_workflows.sql" . }}
{{ template "views/orphan_workflows.sql" . }}
{{ template "views/stuck_executions.sql" . }}
{{ template "views/runaway_workflows.sql" . }}
{{ template "views/workflow_timeline.sql" . }}
{{ template "views/step_stats.sql" . }}
{{ template "views/workflow_list.sql" . }}
{{ template "views/step_errors.sql" . }}
{{ template "views/definition_steps.sql" . }}
{{ template "views/definition_versions.sql" . }}
{{ template "views/step_throughput.sql" . }}
{{ template "views/queue_lag.sql" . }}
{{ template "views/awaiting_events.sql" . }}
{{ template "views/engine_metrics.sql" . }}
{{ template "views/event_stats.sql" . }}
{{ template "views/limit_usage.sql" . }}
{{ template "views/workflow_blockers.sql" . }}
{{ template "views/schedule_list.sql" . }}
{{ template "views/schedule_firing_list.sql" . }}
{{ template "views/action_log.sql" . }}
{{ template "views/workflow_children.sql" . }}

-- Roles and privileges, after everything they name.
{{ template "grants.sql" . }}
