package tests

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/pgtemp"
)

// distFile is the committed psql install, relative to the tests' directory.
const distFile = "../dist/geneva.sql"

// released says whether Geneva has had a tagged release. Flip it with the
// first tag: from then on migrations are immutable and a schema change is a
// new one (migrations/README.md).
const released = false

// Before the first tagged release no database needs an upgrade path, so the
// schema is one migration and a change edits it.
func TestOneMigrationUntilTheFirstRelease(t *testing.T) {
	t.Parallel()
	if released {
		t.Skip("released: a schema change is a new migration")
	}
	migrations, err := fs.Glob(geneva.FS, "migrations/*.sql")
	require.NoError(t, err)
	require.Equal(t, []string{"migrations/001_create_schema.sql"}, migrations,
		"before the first tagged release, a schema change edits 001_create_schema.sql "+
			"(migrations/README.md); flip released in tests/install_test.go with the first tag")
}

func TestInstall(t *testing.T) {
	t.Parallel()

	t.Run("DistFileIsUpToDate", func(t *testing.T) {
		t.Parallel()
		want, err := geneva.PsqlScript()
		require.NoError(t, err)

		got, err := os.ReadFile(distFile)
		require.NoError(t, err, "run `make sql` to write %s", distFile)

		if string(got) != want {
			gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(want, "\n")
			line := 0
			for line < len(gotLines) && line < len(wantLines) && gotLines[line] == wantLines[line] {
				line++
			}
			t.Fatalf("%s differs from geneva.PsqlScript() from line %d on (%d lines, want %d); run `make sql`",
				distFile, line+1, len(gotLines), len(wantLines))
		}
	})

	t.Run("MigrateIsIdempotent", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := dbtest.NewPool(t)
		before := installedVersions(t, pool)

		result := migrate(t, pool)

		require.Empty(t, result.RiverVersions)
		require.Equal(t, genevaSchemaVersion(t), result.SchemaVersionFrom)
		require.Equal(t, genevaSchemaVersion(t), result.SchemaVersionTo)
		require.Equal(t, before, installedVersions(t, pool))
		// and the functions still work
		_, err := pool.Exec(ctx, `select geneva.define_workflow('Smoke', '{"steps": [{"name": "a"}]}')`)
		require.NoError(t, err)
		var id int64
		require.NoError(t, pool.QueryRow(ctx, "select geneva.create_workflow('Smoke', 'User', '1')").Scan(&id))
		require.NotZero(t, id)
	})

	t.Run("MigrateRunsConcurrently", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		databaseURL := newEmptyDatabase(t)
		pools := []*pgxpool.Pool{newPoolURL(t, databaseURL), newPoolURL(t, databaseURL)}

		results := make([]*geneva.MigrateResult, len(pools))
		errs := make([]error, len(pools))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, pool := range pools {
			wg.Go(func() {
				<-start
				migrateCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
				defer cancel()
				results[i], errs[i] = geneva.Migrate(migrateCtx, pool, nil)
			})
		}
		close(start)
		wg.Wait()

		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
		// one of them applied everything, the other found nothing left to do
		applied := append(append([]int{}, results[0].RiverVersions...), results[1].RiverVersions...)
		require.Equal(t, riverVersions(t), applied)
		for _, result := range results {
			require.Equal(t, genevaSchemaVersion(t), result.SchemaVersionTo)
		}
		require.ElementsMatch(t, []int32{0, genevaSchemaVersion(t)},
			[]int32{results[0].SchemaVersionFrom, results[1].SchemaVersionFrom})
		state := installedVersions(t, pools[0])
		require.Equal(t, riverVersions(t), state.riverMainVersions())
		require.Equal(t, []int32{genevaSchemaVersion(t)}, state.Schema)
		_, err := pools[0].Exec(ctx, `select geneva.define_workflow('Smoke', '{"steps": [{"name": "a"}]}')`)
		require.NoError(t, err)
		_, err = pools[0].Exec(ctx, "select geneva.create_workflow('Smoke', 'User', '1')")
		require.NoError(t, err)
	})

	// A database that a later Geneva, or the development history folded
	// into 001, left at a version this one lacks: Migrate says to recreate
	// it, and changes nothing of Geneva's.
	t.Run("MigrateRefusesAVersionAheadOfItsMigrations", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := dbtest.NewPool(t)
		ahead := genevaSchemaVersion(t) + 8
		_, err := pool.Exec(ctx, "update "+geneva.VersionTable+" set version = $1", ahead)
		require.NoError(t, err)

		_, err = geneva.Migrate(ctx, pool, nil)

		require.Error(t, err)
		require.ErrorContains(t, err, fmt.Sprintf("at version %d", ahead))
		require.ErrorContains(t, err, "dropdb")
		require.Equal(t, []int32{ahead}, installedVersions(t, pool).Schema)
	})

	t.Run("MigrateNeedsOnlyOnePoolConnection", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		config, err := pgxpool.ParseConfig(newEmptyDatabase(t))
		require.NoError(t, err)
		config.MaxConns = 1
		pool, err := pgxpool.NewWithConfig(ctx, config)
		require.NoError(t, err)
		t.Cleanup(pool.Close)

		result, err := geneva.Migrate(ctx, pool, nil)

		require.NoError(t, err)
		require.Equal(t, riverVersions(t), result.RiverVersions)
		require.Equal(t, genevaSchemaVersion(t), result.SchemaVersionTo)
	})

	t.Run("MigrateUpgradesCodeInPlace", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := dbtest.NewPool(t)
		_, err := pool.Exec(ctx, "drop function geneva.skip_step(bigint)")
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `create or replace function geneva.now() returns timestamptz
			language sql as $$ select 'epoch'::timestamptz $$`)
		require.NoError(t, err)

		result := migrate(t, pool)

		require.Empty(t, result.RiverVersions)
		require.Equal(t, result.SchemaVersionFrom, result.SchemaVersionTo)
		var skipStep *string
		require.NoError(t, pool.QueryRow(ctx, "select to_regprocedure('geneva.skip_step(bigint)')::text").Scan(&skipStep))
		require.NotNil(t, skipStep, "geneva.skip_step(bigint) was not reinstalled")
		var engineNow, dbNow time.Time
		require.NoError(t, pool.QueryRow(ctx, "select geneva.now(), now()").Scan(&engineNow, &dbNow))
		require.WithinDuration(t, dbNow, engineNow, time.Second)
		// and the restored function works
		_, err = pool.Exec(ctx, `select geneva.define_workflow('Smoke', '{"steps": [{"name": "a"}, {"name": "b"}]}')`)
		require.NoError(t, err)
		var id int64
		require.NoError(t, pool.QueryRow(ctx, "select geneva.create_workflow('Smoke', 'User', '1')").Scan(&id))
		var nextStep string
		require.NoError(t, pool.QueryRow(ctx, "select (geneva.skip_step($1)).next_step_name", id).Scan(&nextStep))
		require.Equal(t, "b", nextStep)
	})

	t.Run("PsqlScriptAfterMigrateAndMigrateAfterPsql", func(t *testing.T) {
		t.Parallel()
		psql := requirePsql(t)
		ctx := context.Background()

		// psql on a database that Migrate installed
		conf := dbtest.NewConfig(t)
		migrated := dbtest.NewPoolConfig(t, conf)
		before := installedVersions(t, migrated)
		runPsql(t, psql, conf.URL())
		require.Equal(t, before, installedVersions(t, migrated))
		_, err := migrated.Exec(ctx, `select geneva.define_workflow('Smoke', '{"steps": [{"name": "a"}]}')`)
		require.NoError(t, err)
		_, err = migrated.Exec(ctx, "select geneva.create_workflow('Smoke', 'User', '1')")
		require.NoError(t, err)

		// Migrate on a database that psql installed
		databaseURL := newEmptyDatabase(t)
		runPsql(t, psql, databaseURL)
		installed := newPoolURL(t, databaseURL)
		before = installedVersions(t, installed)
		result := migrate(t, installed)
		require.Empty(t, result.RiverVersions)
		require.Equal(t, result.SchemaVersionFrom, result.SchemaVersionTo)
		require.Equal(t, genevaSchemaVersion(t), result.SchemaVersionTo)
		require.Equal(t, before, installedVersions(t, installed))
		_, err = installed.Exec(ctx, `select geneva.define_workflow('Smoke', '{"steps": [{"name": "a"}]}')`)
		require.NoError(t, err)
		_, err = installed.Exec(ctx, "select geneva.create_workflow('Smoke', 'User', '1')")
		require.NoError(t, err)
	})

	// The two ways to install give the same database, to the last index,
	// comment and grant.
	t.Run("MigrateAndPsqlScriptInstallIdenticalSchemas", func(t *testing.T) {
		t.Parallel()
		psql := requirePsql(t)
		pgDump, err := pgtemp.Program("pg_dump")
		if err != nil {
			t.Skipf("cannot compare schemas: %v", err)
		}

		migratedURL := newEmptyDatabase(t)
		migrate(t, newPoolURL(t, migratedURL))
		psqlURL := newEmptyDatabase(t)
		runPsql(t, psql, psqlURL)

		dump := func(databaseURL string) string {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, pgDump, "--schema-only", "-d", databaseURL).CombinedOutput()
			require.NoError(t, err, "pg_dump:\n%s", out)
			// (pg_dump's \restrict lines carry a random key)
			var lines []string
			for line := range strings.Lines(string(out)) {
				if !strings.HasPrefix(line, `\restrict `) && !strings.HasPrefix(line, `\unrestrict `) {
					lines = append(lines, line)
				}
			}
			return strings.Join(lines, "")
		}
		migrated, installed := dump(migratedURL), dump(psqlURL)
		require.Contains(t, migrated, "create_workflow")
		require.Equal(t, migrated, installed, "geneva migrate and psql -f dist/geneva.sql install different schemas")
	})

	t.Run("PsqlScriptInstallsOnEmptyDatabase", func(t *testing.T) {
		t.Parallel()
		psql := requirePsql(t)
		ctx := context.Background()
		databaseURL := newEmptyDatabase(t)

		runPsql(t, psql, databaseURL)

		b := &testBundle{conn: newConnURL(t, databaseURL), ctx: ctx}
		state := installedVersionsOn(t, b.conn)
		require.Equal(t, riverVersions(t), state.riverMainVersions())
		require.Equal(t, []int32{genevaSchemaVersion(t)}, state.Schema)

		b.define(t, "Smoke", `{"steps": [{"name": "a"}, {"name": "b"}]}`)

		// a workflow runs to the end
		id := b.create(t, "Smoke", "1")
		first := b.run(t, id)
		require.Equal(t, "a", first.StepName)
		require.Equal(t, completed{Outcome: ptr("success"), WorkflowState: "ready"}, b.complete(t, first.ExecutionID, "success", nil))
		second := b.run(t, id)
		require.Equal(t, "b", second.StepName)
		require.Equal(t, completed{Outcome: ptr("success"), WorkflowState: "finished"}, b.complete(t, second.ExecutionID, "success", nil))
		wf := b.workflow(t, id)
		require.Equal(t, "finished", wf.State)
		require.NotNil(t, wf.FinishedAt)
		executions := b.executions(t, id)
		require.Len(t, executions, 2)
		for i, step := range []string{"a", "b"} {
			execution := executions[i]
			require.Equal(t, step, execution.StepName)
			require.Equal(t, "completed", execution.State)
			require.Equal(t, "success", deref(execution.Outcome))
			require.NotNil(t, execution.JobID, "execution of %s has no River job", step)
			require.Equal(t, "geneva_step", b.job(t, *execution.JobID).Kind)
		}

		// an operator pauses, resumes, skips and cancels another
		other := b.create(t, "Smoke", "2")
		require.Equal(t, "paused", b.call(t, "pause_workflow", other))
		require.Equal(t, "ready", b.call(t, "resume_workflow", other))
		skipped := b.active(t, other)
		require.Equal(t, "ready", b.call(t, "skip_step", other))
		got := b.execution(t, skipped.ID)
		require.Equal(t, "skipped", got.State)
		require.Equal(t, "skipped_externally", deref(got.Outcome))
		next := b.active(t, other)
		require.Equal(t, "b", next.StepName)
		require.Equal(t, "canceled", b.call(t, "cancel_workflow", other))
		got = b.execution(t, next.ID)
		require.Equal(t, "canceled", got.State)
		require.Equal(t, "canceled_externally", deref(got.Outcome))
		b.noActive(t, other)

		var jobs int
		require.NoError(t, b.conn.QueryRow(ctx, "select count(*) from public.river_job where kind = 'geneva_step'").Scan(&jobs))
		require.GreaterOrEqual(t, jobs, 4)
	})

	t.Run("PsqlScriptIsIdempotent", func(t *testing.T) {
		t.Parallel()
		psql := requirePsql(t)
		databaseURL := newEmptyDatabase(t)
		runPsql(t, psql, databaseURL)
		conn := newConnURL(t, databaseURL)
		before := installedVersionsOn(t, conn)

		runPsql(t, psql, databaseURL)

		after := installedVersionsOn(t, conn)
		require.Equal(t, before, after)
		require.Equal(t, riverVersions(t), after.riverMainVersions())
		require.Equal(t, []int32{genevaSchemaVersion(t)}, after.Schema)
		var id int64
		_, err := conn.Exec(context.Background(), `select geneva.define_workflow('Smoke', '{"steps": [{"name": "a"}]}')`)
		require.NoError(t, err)
		require.NoError(t, conn.QueryRow(context.Background(), "select geneva.create_workflow('Smoke', 'User', '1')").Scan(&id))
	})

	t.Run("RiverSchemaIsInstalled", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := dbtest.NewPool(t)

		var riverJob *string
		require.NoError(t, pool.QueryRow(ctx, "select to_regclass('public.river_job')::text").Scan(&riverJob))
		require.NotNil(t, riverJob, "public.river_job does not exist")
		require.Equal(t, riverVersions(t), installedVersions(t, pool).riverMainVersions())
	})
}

// migrate runs geneva.Migrate on pool and returns its result.
func migrate(t *testing.T, pool *pgxpool.Pool) *geneva.MigrateResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	result, err := geneva.Migrate(ctx, pool, nil)
	require.NoError(t, err)
	return result
}

// riverVersions are the versions of River's main migration line, in order.
func riverVersions(t *testing.T) []int {
	t.Helper()
	migrator, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	require.NoError(t, err)
	var versions []int
	for _, migration := range migrator.AllVersions() {
		versions = append(versions, migration.Version)
	}
	return versions
}

// genevaSchemaVersion is the version of Geneva's last numbered migration.
func genevaSchemaVersion(t *testing.T) int32 {
	t.Helper()
	migrations, err := fs.Glob(geneva.FS, "migrations/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, migrations)
	return int32(len(migrations))
}

// riverMigration is a row of public.river_migration.
type riverMigration struct {
	Line      string
	Version   int64
	CreatedAt time.Time
}

// installState is what a database records of the migrations applied to it.
type installState struct {
	River  []riverMigration
	Schema []int32 // the rows of geneva.VersionTable
}

func (s installState) riverMainVersions() []int {
	var versions []int
	for _, migration := range s.River {
		if migration.Line == "main" {
			versions = append(versions, int(migration.Version))
		}
	}
	return versions
}

func installedVersions(t *testing.T, pool *pgxpool.Pool) installState {
	t.Helper()
	conn, err := pool.Acquire(context.Background())
	require.NoError(t, err)
	defer conn.Release()
	return installedVersionsOn(t, conn.Conn())
}

func installedVersionsOn(t *testing.T, conn *pgx.Conn) installState {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, "select line, version, created_at from public.river_migration order by line, version")
	require.NoError(t, err)
	river, err := pgx.CollectRows(rows, pgx.RowToStructByPos[riverMigration])
	require.NoError(t, err)
	rows, err = conn.Query(ctx, "select version from "+geneva.VersionTable)
	require.NoError(t, err)
	schema, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(t, err)
	return installState{River: river, Schema: schema}
}

// newEmptyDatabase creates a database without Geneva's schema on the test
// server, dropped when the test ends, and returns its URL.
func newEmptyDatabase(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	suffix := make([]byte, 8)
	_, err := rand.Read(suffix)
	require.NoError(t, err)
	name := "geneva_install_" + hex.EncodeToString(suffix)
	ident := pgx.Identifier{name}.Sanitize()

	server, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	defer server.Close(ctx)
	_, err = server.Exec(ctx, "create database "+ident)
	require.NoError(t, err)
	t.Cleanup(func() {
		server, err := pgx.Connect(ctx, dbtest.ServerURL())
		if err != nil {
			t.Errorf("dropping database %s: %v", name, err)
			return
		}
		defer server.Close(ctx)
		if _, err := server.Exec(ctx, "drop database if exists "+ident+" with (force)"); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})

	u, err := url.Parse(dbtest.ServerURL())
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}

func newPoolURL(t *testing.T, databaseURL string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), databaseURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

func newConnURL(t *testing.T, databaseURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), databaseURL)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// runPsql runs dist/geneva.sql with psql on the database, as the README says
// to install without Go.
func runPsql(t *testing.T, psql, databaseURL string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", distFile, "-d", databaseURL)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "psql -f %s:\n%s", distFile, out)
}

// requirePsql returns the path of psql, or skips the test without one.
func requirePsql(t *testing.T) string {
	t.Helper()
	psql, err := pgtemp.Program("psql")
	if err != nil {
		t.Skipf("cannot test the psql install: %v", err)
	}
	return psql
}
