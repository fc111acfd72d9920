-- Geneva's roles and every privilege on its objects, in one place, applied
-- last by sql/install.sql on every install.
--
-- The functions are the only door: the public ones are security definers
-- (they run as the schema's owner) and no role has any privilege on a table
-- of schema geneva, so a role can do exactly what the functions it may
-- execute allow. The private `_` helpers are not security definers: only the
-- public functions call them, already as the owner, so being definers would
-- add a privilege switch to every call of the hot path and nothing else; and
-- were one ever granted by mistake, it would still run with its caller's
-- privileges only. The exception is geneva._trg_hero_deleted, a trigger
-- function fired by the application's own deletes. geneva.allow_fake_clock
-- is the owner's alone (invoker rights, granted to no one). Four NOLOGIN roles, granted to login roles by the database's
-- administrator (docs/security.md):
--
--   reader    dashboards: the views and the read functions
--   app       applications: what reader may, and create_workflow(s),
--             send_event and send_hero_event
--   operator  operators: what app may, and pause, resume, cancel, skip,
--             schedule, retry, bulk verbs, housekeeping (its thresholds and
--             settings too), hero tracking, named limits (define_limit),
--             schedules (create, pause, resume, delete, fire) and the
--             definitions of HTTP-only types (define_workflow)
--   worker    workers: the worker protocol, define_workflow, housekeeping
--             rounds with the operators' settings (housekeep_if_due),
--             firing schedules (fire_schedules), the
--             read functions, and River's own tables
--
-- Their names are the template data role_app, role_operator, role_worker and
-- role_reader (SQL identifiers) and role_app_name, … (SQL literals): given by
-- geneva.Migrate from MigrateOpts.Roles, or by psql variables in
-- dist/geneva.sql. Defaults: geneva_app, geneva_operator, geneva_worker,
-- geneva_reader. A role that exists already is used as it is; creating one
-- needs CREATEROLE.
--
-- Everything is revoked first, so a privilege removed here is removed from
-- the database too. A function or view added to the package must be added
-- below (TestGrants in tests/security_test.go fails until it is); a private
-- `_` helper or a table never is.

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
      begin
        execute pg_catalog.format('create role %I nologin', v_role);
      exception when insufficient_privilege then
        raise exception 'role % does not exist, and % may not create it', v_role, current_user
          using errcode = '42501',
                hint = pg_catalog.format(
                  'Create it once as a role with CREATEROLE (create role %I nologin), or name existing roles (docs/security.md).',
                  v_role);
      end;
    end if;
  end loop;
end;
$$;

-- Nothing for anyone (functions are executable by PUBLIC when created).
revoke all on all functions in schema geneva
from public, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }}, {{ .role_reader }};
revoke all on all tables in schema geneva
from public, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }}, {{ .role_reader }};
revoke all on all sequences in schema geneva
from public, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }}, {{ .role_reader }};
revoke all on schema geneva
from public, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }}, {{ .role_reader }};

grant usage on schema geneva
to {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }}, {{ .role_reader }};

-- The clock, for every role (tests and dashboards read it).
grant execute on function geneva.now()
to {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }}, {{ .role_reader }};

-- Reads: dashboards, applications, operators, workers (a worker's client
-- reads the workflows it runs).
grant execute on function
  geneva.get_workflow,
  geneva.final_step_at,
  geneva.list_workflows,
  geneva.count_workflows,
  geneva.error_classes,
  geneva.step_history,
  geneva.get_step_execution
to {{ .role_reader }}, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }};

grant select on
  geneva.workflow_counts,
  geneva.paused_workflows,
  geneva.orphan_workflows,
  geneva.stuck_executions,
  geneva.runaway_workflows,
  geneva.workflow_timeline,
  geneva.step_stats,
  geneva.engine_metrics,
  -- the web dashboard's (package dashboard)
  geneva.workflow_list,
  geneva.step_errors,
  geneva.definition_steps,
  geneva.definition_versions,
  geneva.step_throughput,
  geneva.queue_lag,
  -- events: what waits for which, and what was sent
  geneva.awaiting_events,
  geneva.event_stats,
  -- limits: what each key holds and waits for
  geneva.limit_usage,
  -- why a ready workflow's step has not started (`geneva show`, the
  -- workflow and Stuck pages)
  geneva.workflow_blockers,
  -- schedules, and what their slots did
  geneva.schedule_list,
  geneva.schedule_firing_list,
  -- the operators' actions (the workflow page, `geneva show`)
  geneva.action_log,
  -- parents and their children (`geneva show`)
  geneva.workflow_children
to {{ .role_reader }}, {{ .role_app }}, {{ .role_operator }};

-- Applications and operators (events too: from the application's own
-- transactions, and from an operator's approval inbox).
grant execute on function
  geneva.create_workflow,
  geneva.create_workflows,
  geneva.send_event,
  geneva.send_hero_event
to {{ .role_app }}, {{ .role_operator }};

-- Operators.
grant execute on function
  geneva.pause_workflow,
  geneva.resume_workflow,
  geneva.cancel_workflow,
  geneva.skip_step,
  geneva.schedule_step,
  geneva.track_hero,
  geneva.untrack_hero,
  geneva.define_limit,
  geneva.retry_workflow,
  geneva.bulk_workflows
to {{ .role_operator }};

-- Schedules: operators create, pause, resume and delete them (a schedule
-- creates workflows as the owner, so applications may not); every worker
-- fires them (fire_schedules decides nothing a caller chooses: it fires
-- what is due), and operators may too.
grant execute on function
  geneva.create_schedule,
  geneva.pause_schedule,
  geneva.resume_schedule,
  geneva.delete_schedule
to {{ .role_operator }};

grant execute on function
  geneva.fire_schedules
to {{ .role_operator }}, {{ .role_worker }};

-- Housekeeping: every worker takes part in it through housekeep_if_due,
-- which takes no thresholds; they are the operators' settings
-- (geneva.housekeeping_settings), which everyone may read. Choosing
-- thresholds (housekeep's arguments, the settings) decides what is deleted
-- and recovered: operators only.
grant execute on function
  geneva.housekeep_if_due
to {{ .role_operator }}, {{ .role_worker }};

grant execute on function
  geneva.get_housekeeping_settings
to {{ .role_reader }}, {{ .role_app }}, {{ .role_operator }}, {{ .role_worker }};

grant execute on function
  geneva.housekeep,
  geneva.set_housekeeping_settings
to {{ .role_operator }};

-- Archive (docs/history.md): writing expired history out and dropping it
-- is retention's work, the operators' (`geneva archive`).
grant execute on function
  geneva.archive_partitions,
  geneva.archive_partition_rows,
  geneva.drop_archived_partition
to {{ .role_operator }};

-- Workers: the worker protocol, and the definitions they register.
-- Operators (deployers) may define too, but only types whose every step is
-- HTTP: define_workflow refuses them a Go step (42501).
grant execute on function
  geneva.define_workflow
to {{ .role_operator }}, {{ .role_worker }};

grant execute on function
  geneva.step_defined,
  geneva.start_step,
  geneva.complete_step,
  geneva.complete_and_continue,
  geneva.complete_steps,
  geneva.start_steps,
  geneva.fail_step,
  geneva.checkpoint_step,
  geneva.interrupt_step,
  geneva.heartbeat_step,
  geneva.parse_wait
to {{ .role_worker }};

-- Workers: River's own tables (its client fetches, completes, snoozes and
-- inserts jobs, elects a leader, keeps queues; LISTEN/NOTIFY needs no
-- privilege). Whatever River tables the installed version has.
do $$
declare
  v_worker text := pg_catalog.current_setting('geneva.role_worker');
  v_relation record;
begin
  for v_relation in
    select c.relname, c.relkind
    from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relname like 'river\_%' and c.relkind in ('r', 'S')
  loop
    if v_relation.relkind = 'S' then
      execute pg_catalog.format('grant usage, select, update on sequence public.%I to %I', v_relation.relname, v_worker);
    elsif v_relation.relname = 'river_migration' then
      execute pg_catalog.format('grant select on public.%I to %I', v_relation.relname, v_worker);
    else
      execute pg_catalog.format(
        'grant select, insert, update, delete on public.%I to %I', v_relation.relname, v_worker
      );
    end if;
  end loop;
end;
$$;
