package tests

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/internal/dbtest"
)

// TestGrants checks sql/grants.sql against the catalog, so that a function or
// view added later cannot be left out (or a helper or table let in) silently.
func TestGrants(t *testing.T) {
	b := setup(t)
	roles := []string{geneva.DefaultRoles.App, geneva.DefaultRoles.Operator, geneva.DefaultRoles.Worker, geneva.DefaultRoles.Reader}

	t.Run("EveryPublicFunctionIsGrantedToARoleAndNotToPublic", func(t *testing.T) {
		rows, err := b.conn.Query(b.ctx, `
			select p.oid::regprocedure::text
			from pg_proc p
			where p.pronamespace = 'geneva'::regnamespace and p.proname not like '\_%'
			  and p.proname <> 'allow_fake_clock' -- the owner's alone
			  and p.prokind = 'f'
			  and not exists (select from unnest($1::text[]) r where has_function_privilege(r, p.oid, 'execute'))
			order by 1`, roles)
		require.NoError(t, err)
		missing, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Empty(t, missing, "public functions no Geneva role may execute: add them to sql/grants.sql")
	})

	t.Run("NoHelperIsGrantedToAnyone", func(t *testing.T) {
		// any grantee but the owner, PUBLIC included
		rows, err := b.conn.Query(b.ctx, `
			select p.oid::regprocedure::text || ' to ' || coalesce(a.grantee::regrole::text, 'PUBLIC')
			from pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
			where p.pronamespace = 'geneva'::regnamespace
			  and a.grantee <> p.proowner
			  and (p.proname like '\_%' or a.grantee = 0)
			order by 1`)
		require.NoError(t, err)
		granted, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Empty(t, granted)
	})

	t.Run("EveryPublicViewIsGrantedNoTableOrSequenceIs", func(t *testing.T) {
		rows, err := b.conn.Query(b.ctx, `
			select c.relname || ' (' || c.relkind::text || ')'
			from pg_class c
			where c.relnamespace = 'geneva'::regnamespace and c.relkind in ('r', 'v', 'S', 'm', 'p')
			  and case when c.relkind = 'v' and c.relname ~ '^_'
			    -- a private view (the union of live and history the
			    -- functions and views read): no one's
			    then exists (select from unnest($1::text[]) r where has_table_privilege(r, c.oid, 'select'))
			  when c.relkind = 'v'
			    then not exists (select from unnest($1::text[]) r where has_table_privilege(r, c.oid, 'select'))
			    else exists (
			      select from aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
			      where a.grantee <> c.relowner)
			  end
			order by 1`, roles)
		require.NoError(t, err)
		wrong, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Empty(t, wrong, "views no role may read, or tables and sequences someone may use")
	})

	t.Run("RolesAreNologin", func(t *testing.T) {
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select count(*) from pg_roles where rolname = any($1) and not rolcanlogin", roles).Scan(&n))
		require.Equal(t, 4, n)
	})
}

// TestLeastPrivilege: each role may call what sql/grants.sql gives it and
// nothing else; no hand-written change to Geneva's tables (or River's, but
// for the worker) gets through, and nothing changes.
func TestLeastPrivilege(t *testing.T) {
	b := setup(t)
	b.defineThreeSteps(t)
	id := b.create(t, "ThreeSteps", "1")
	first := b.active(t, id)

	// before is the state the refused statements must leave as it is.
	snapshot := func() string {
		var s string
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			select concat_ws('|',
			  (select string_agg(to_jsonb(w)::text, ',' order by id) from geneva.workflows w),
			  (select string_agg(to_jsonb(e)::text, ',' order by id) from geneva.step_executions e),
			  (select string_agg(to_jsonb(d)::text, ',') from geneva.workflow_definitions d),
			  (select string_agg(to_jsonb(j)::text, ',' order by id) from river_job j))`).Scan(&s))
		return s
	}
	before := snapshot()

	handWritten := []string{
		// strand a workflow
		"update geneva.step_executions set state = 'completed', outcome = 'success', finished_at = now() where state = 'scheduled'",
		"delete from geneva.step_executions",
		// rewrite a workflow, a definition
		"update geneva.workflows set hero_id = 'other'",
		"update geneva.workflow_definitions set definition = '{\"steps\": \"oops\"}', step_names = '{}'",
		"delete from geneva.workflows",
		"insert into geneva.workflows (workflow_type, hero_type, hero_id, state, created_at, updated_at) values ('ThreeSteps', 'User', '2', 'ready', now(), now())",
		"delete from geneva.workflow_definitions",
		"select nextval('geneva.workflows_id_seq')",
		// forge or consume an event
		"insert into geneva.events (workflow_id, name, sent_at, sent_by) values ($1, 'approved', now(), 'me')",
		"update geneva.events set consumed_at = now()",
		// turn the test clock on or off
		"select geneva.allow_fake_clock(true)",
		"select geneva.allow_fake_clock(false)",
		"create table geneva.fake_clock_enabled ()",
		"drop table geneva.fake_clock_enabled",
		// call a helper
		"select geneva._definition('ThreeSteps')",
		"select geneva._end_execution(e, 'completed', 'success') from geneva.step_executions e",
	}
	riverWrites := []string{
		"update river_job set state = 'cancelled', finalized_at = now()",
		"delete from river_job",
	}

	roleCalls := map[dbtest.Role][]string{
		dbtest.Reader: {
			"select geneva.create_workflow('ThreeSteps', 'User', '9')",
			"select geneva.create_workflows('ThreeSteps', 'User', array['9'])",
			"select geneva.pause_workflow($1)",
			"select geneva.housekeep(null)",
			"select geneva.define_workflow('X', '{\"steps\": []}')",
			"select * from geneva.start_step($2, null)",
			"select geneva.send_event($1, 'approved')",
			"select geneva.send_hero_event('User', '1', 'approved')",
		},
		dbtest.App: {
			"select geneva.pause_workflow($1)",
			"select geneva.cancel_workflow($1)",
			"select geneva.housekeep(null)",
			"select geneva.define_workflow('X', '{\"steps\": []}')",
			"select * from geneva.start_step($2, null)",
			"select * from geneva.complete_step($2)",
		},
		dbtest.Operator: {
			// (operators define HTTP-only types; a Go step is the worker's)
			"select geneva.define_workflow('X', '{\"steps\": [{\"name\": \"a\"}]}')",
			"select * from geneva.start_step($2, null)",
			"select * from geneva.fail_step($2, '{E}', 'm', null, null, null, null, null)",
		},
		dbtest.Worker: {
			"select geneva.create_workflow('ThreeSteps', 'User', '9')",
			"select geneva.create_workflows('ThreeSteps', 'User', array['9'])",
			"select geneva.pause_workflow($1)",
			"select geneva.cancel_workflow($1)",
			"select geneva.skip_step($1)",
			"select geneva.send_event($1, 'approved')",
			"select geneva.send_hero_event('User', '1', 'approved')",
		},
	}

	for _, role := range []dbtest.Role{dbtest.App, dbtest.Operator, dbtest.Reader, dbtest.Worker} {
		t.Run(string(role), func(t *testing.T) {
			conn := dbtest.NewConnAs(t, b.conf, role)
			refused := append(append([]string{}, handWritten...), roleCalls[role]...)
			if role != dbtest.Worker {
				refused = append(refused, riverWrites...)
			}
			for _, statement := range refused {
				// $1 is the workflow, $2 its execution
				statement = strings.NewReplacer("$1", strconv.FormatInt(id, 10), "$2", strconv.FormatInt(first.ID, 10)).Replace(statement)
				_, err := conn.Exec(b.ctx, statement)
				requireCode(t, err, "42501")
			}
			require.Equal(t, before, snapshot(), "a refused statement changed something")
		})
	}

	t.Run("EachRoleDoesItsWork", func(t *testing.T) {
		reader := dbtest.NewConnAs(t, b.conf, dbtest.Reader)
		for _, read := range []string{
			"select count(*) from geneva.workflow_counts",
			"select count(*) from geneva.paused_workflows",
			"select count(*) from geneva.stuck_executions",
			"select count(*) from geneva.workflow_timeline",
			"select count(*) from geneva.step_stats",
			"select count(*) from geneva.list_workflows()",
			"select count(*) from geneva.get_workflow(1)",
			"select count(*) from geneva.step_history(1)",
			"select count(*) from geneva.get_step_execution(1)",
		} {
			_, err := reader.Exec(b.ctx, read)
			require.NoError(t, err, read)
		}

		app := dbtest.NewConnAs(t, b.conf, dbtest.App)
		var other int64
		require.NoError(t, app.QueryRow(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', 'app')").Scan(&other))

		var sent bool
		require.NoError(t, app.QueryRow(b.ctx, "select geneva.send_event($1, 'from_app')", other).Scan(&sent))
		require.True(t, sent)
		var reached int
		require.NoError(t, app.QueryRow(b.ctx, "select geneva.send_hero_event('User', 'app', 'from_app')").Scan(&reached))
		require.Equal(t, 1, reached)
		_, err := app.Exec(b.ctx, "select count(*) from geneva.awaiting_events")
		require.NoError(t, err)

		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		require.NoError(t, operator.QueryRow(b.ctx, "select geneva.send_event($1, 'from_operator', '{\"ok\": true}')", other).Scan(&sent))
		require.True(t, sent)
		var sentBy []string
		rows, err := b.conn.Query(b.ctx, "select sent_by from geneva.events where workflow_id = $1 order by id", other)
		require.NoError(t, err)
		sentBy, err = pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Len(t, sentBy, 3, "each event is kept with its sender (session_user)")
		_, err = operator.Exec(b.ctx, "select geneva.pause_workflow($1)", other)
		require.NoError(t, err)
		require.Equal(t, "paused", b.workflow(t, other).State)
		// hero tracking runs as the owner, but never on Geneva's or River's tables
		for _, table := range []string{"geneva.workflows", "geneva.step_executions", "public.river_job"} {
			_, err = operator.Exec(b.ctx, "select geneva.track_hero($1, 'User', 'id')", table)
			requireCode(t, err, "22023")
		}

		worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
		started, ok, err := startStepOn(b.ctx, worker, first.ID, nil)
		require.NoError(t, err)
		require.True(t, ok)
		_, err = worker.Exec(b.ctx, "select * from geneva.complete_step($1, 'success', null, $2)", started.ExecutionID, first.JobID)
		require.NoError(t, err)
		require.Equal(t, "b", b.active(t, id).StepName)
	})
}

// TestTempTypeShadowing: a session's temp table named like a type (text)
// cannot change what the functions mean (their search_path puts pg_temp
// last).
func TestTempTypeShadowing(t *testing.T) {
	b := setup(t)
	b.defineThreeSteps(t)
	app := dbtest.NewConnAs(t, b.conf, dbtest.App)
	_, err := app.Exec(b.ctx, "create temp table text (x int)")
	require.NoError(t, err)
	_, err = app.Exec(b.ctx, "create temp table workflows (x int)")
	require.NoError(t, err)
	var id int64
	require.NoError(t, app.QueryRow(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1')").Scan(&id))
	require.Equal(t, "ready", b.workflow(t, id).State)
	require.Equal(t, "a", b.active(t, id).StepName)
}

// TestRoleNames: the roles' names come from MigrateOpts.Roles for
// geneva.Migrate and from psql variables for dist/geneva.sql; the roles are
// created when missing.
func TestRoleNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// names of this test's own, dropped after the databases
	suffix := make([]byte, 4)
	_, err := rand.Read(suffix)
	require.NoError(t, err)
	prefix := "geneva_t" + hex.EncodeToString(suffix) + "_"
	roles := geneva.Roles{App: prefix + "app", Operator: prefix + "operator", Worker: prefix + "worker", Reader: prefix + "reader"}
	t.Cleanup(func() {
		server, err := pgx.Connect(ctx, dbtest.ServerURL())
		if err != nil {
			t.Errorf("dropping roles: %v", err)
			return
		}
		defer server.Close(ctx)
		for _, role := range []string{roles.App, roles.Operator, roles.Worker, roles.Reader} {
			if _, err := server.Exec(ctx, "drop role if exists "+pgx.Identifier{role}.Sanitize()); err != nil {
				t.Errorf("dropping role %s: %v", role, err)
			}
		}
	})

	check := func(t *testing.T, conn *pgx.Conn) {
		t.Helper()
		for role, may := range map[string]bool{
			roles.App: true, roles.Operator: true, roles.Reader: false, roles.Worker: false,
		} {
			var got bool
			require.NoError(t, conn.QueryRow(ctx,
				"select has_function_privilege($1, 'geneva.create_workflow(text, text, text, boolean, text, text, text, bigint)', 'execute')", role).Scan(&got))
			require.Equal(t, may, got, role)
		}
		var login bool
		require.NoError(t, conn.QueryRow(ctx, "select rolcanlogin from pg_roles where rolname = $1", roles.Worker).Scan(&login))
		require.False(t, login)
	}

	t.Run("Migrate", func(t *testing.T) {
		databaseURL := newEmptyDatabase(t)
		pool := newPoolURL(t, databaseURL)
		_, err := geneva.Migrate(ctx, pool, &geneva.MigrateOpts{Roles: roles})
		require.NoError(t, err)
		check(t, newConnURL(t, databaseURL))
	})

	t.Run("Psql", func(t *testing.T) {
		psql := requirePsql(t)
		databaseURL := newEmptyDatabase(t)
		cmd := exec.CommandContext(ctx, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1",
			"-v", "geneva_app_role="+roles.App, "-v", "geneva_operator_role="+roles.Operator,
			"-v", "geneva_worker_role="+roles.Worker, "-v", "geneva_reader_role="+roles.Reader,
			"-f", distFile, "-d", databaseURL)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		check(t, newConnURL(t, databaseURL))
	})
}
