package geneva

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// VersionTable is the tern version table that records which of Geneva's
// numbered migrations a database has. It is Geneva's own, so that it never
// clashes with an application's tern history.
const VersionTable = "public.geneva_schema_version"

// RiverSchema is the schema River's tables live in. Geneva's functions insert
// River jobs into public.river_job and notify public.river_insert.
const RiverSchema = "public"

// migrateLockKey serializes concurrent runs of Migrate (River's migrator takes
// no lock of its own). Arbitrary; spells "geneva" in hex, roughly.
const migrateLockKey = int64(0x67656e657661)

// MigrateOpts are options for Migrate.
type MigrateOpts struct {
	// Logger receives River's migration log lines.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger

	// Roles names the roles Geneva creates (when they do not exist) and
	// grants its functions and views to. Empty names take the defaults of
	// [DefaultRoles].
	Roles Roles

	// CellPartitions, when not zero, installs a cell of that many
	// partitions (a power of two; docs/cells.md): the ids the database
	// makes carry their partition. A database that is a cell stays one, of
	// the same count, when a later Migrate leaves this zero.
	CellPartitions int
}

// Roles are the names of Geneva's four NOLOGIN roles (docs/security.md).
// Clusters whose databases each hold a Geneva schema may give each database
// its own names.
type Roles struct {
	// App may create workflows and read them: applications.
	App string
	// Operator may do what App may, and pause, resume, cancel, skip and
	// schedule workflows, run housekeeping and track heroes: operators and
	// the geneva command.
	Operator string
	// Worker may run the worker protocol, define workflows, run housekeeping,
	// and use River's tables: workers.
	Worker string
	// Reader may read the views and workflows: dashboards.
	Reader string
}

// DefaultRoles are the roles' names unless MigrateOpts.Roles (or the psql
// variables geneva_app_role, geneva_operator_role, geneva_worker_role and
// geneva_reader_role of dist/geneva.sql) say otherwise.
var DefaultRoles = Roles{
	App:      "geneva_app",
	Operator: "geneva_operator",
	Worker:   "geneva_worker",
	Reader:   "geneva_reader",
}

// withDefaults returns roles with the empty names replaced by the defaults.
func (roles Roles) withDefaults() Roles {
	pick := func(name, def string) string {
		if name == "" {
			return def
		}
		return name
	}
	return Roles{
		App:      pick(roles.App, DefaultRoles.App),
		Operator: pick(roles.Operator, DefaultRoles.Operator),
		Worker:   pick(roles.Worker, DefaultRoles.Worker),
		Reader:   pick(roles.Reader, DefaultRoles.Reader),
	}
}

// templateData is the code package's template data (see sql/grants.sql):
// each role's name as an SQL identifier and as an SQL literal.
func (roles Roles) templateData() map[string]any {
	roles = roles.withDefaults()
	data := map[string]any{}
	for key, name := range map[string]string{
		"role_app": roles.App, "role_operator": roles.Operator,
		"role_worker": roles.Worker, "role_reader": roles.Reader,
	} {
		data[key] = pgx.Identifier{name}.Sanitize()
		data[key+"_name"] = "'" + strings.ReplaceAll(name, "'", "''") + "'"
	}
	return data
}

// MigrateResult tells what Migrate did.
type MigrateResult struct {
	// RiverVersions are the River migrations applied, in order (none when River
	// was up to date).
	RiverVersions []int

	// SchemaVersionFrom and SchemaVersionTo are Geneva's schema versions (its
	// numbered migrations) before and after.
	SchemaVersionFrom int32
	SchemaVersionTo   int32
}

// Migrate installs or upgrades Geneva's schema in place: River's own migrations
// first (Geneva's SQL inserts River jobs, so both must be present), then
// Geneva's numbered migrations (tables, constraints, indexes), then the code
// package from sql/ (every function), reinstalled each time in one transaction.
// It is idempotent and safe to run from several processes at once.
func Migrate(ctx context.Context, pool *pgxpool.Pool, opts *MigrateOpts) (*MigrateResult, error) {
	if opts == nil {
		opts = &MigrateOpts{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	// A connection of its own, outside the pool: it holds the lock and runs
	// tern, while River's migrator uses the pool (which may have a single
	// connection). Closing it releases the lock.
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("geneva: migrate: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))

	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", migrateLockKey); err != nil {
		return nil, fmt.Errorf("geneva: migrate: taking the migration lock: %w", err)
	}

	result := &MigrateResult{}

	riverMigrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{
		Logger: logger,
		Schema: RiverSchema,
	})
	if err != nil {
		return nil, fmt.Errorf("geneva: migrate: %w", err)
	}
	riverResult, err := riverMigrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return nil, fmt.Errorf("geneva: migrate: River's schema: %w", err)
	}
	for _, version := range riverResult.Versions {
		result.RiverVersions = append(result.RiverVersions, version.Version)
	}

	migrator, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return nil, fmt.Errorf("geneva: migrate: %w", err)
	}
	if err := migrator.LoadMigrations(mustSub("migrations")); err != nil {
		return nil, fmt.Errorf("geneva: migrate: loading migrations: %w", err)
	}
	if result.SchemaVersionFrom, err = migrator.GetCurrentVersion(ctx); err != nil {
		return nil, fmt.Errorf("geneva: migrate: %w", err)
	}
	if last := int32(len(migrator.Migrations)); result.SchemaVersionFrom > last {
		// tern would say only "current version 9 is outside the valid
		// versions of 0 to 1".
		return nil, fmt.Errorf("geneva: migrate: the database's schema is at version %d (%s), "+
			"but this Geneva knows versions up to %d only: a newer Geneva migrated it, or a development "+
			"version did before the migrations were folded into migrations/001_create_schema.sql "+
			"(until the first tagged release, every schema change edits 001); "+
			"recreate a development database: dropdb, createdb, geneva migrate (migrations/README.md)",
			result.SchemaVersionFrom, VersionTable, last)
	}
	if err := migrator.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("geneva: migrate: %w", describePgError(err))
	}
	result.SchemaVersionTo = int32(len(migrator.Migrations))

	codePackage, err := migrate.LoadCodePackage(mustSub("sql"))
	if err != nil {
		return nil, fmt.Errorf("geneva: migrate: loading sql/: %w", err)
	}
	partitions, err := cellPartitions(ctx, conn, opts.CellPartitions)
	if err != nil {
		return nil, fmt.Errorf("geneva: migrate: %w", err)
	}
	if partitions == 0 {
		if err := migrate.InstallCodePackage(ctx, conn, opts.Roles.templateData(), codePackage); err != nil {
			return nil, fmt.Errorf("geneva: migrate: installing sql/: %w", describePgError(err))
		}
	} else if err := installCell(ctx, conn, opts.Roles.templateData(), codePackage, partitions); err != nil {
		return nil, fmt.Errorf("geneva: migrate: installing sql/ as a cell: %w", describePgError(err))
	}

	return result, nil
}

// describePgError adds the line and column of a failing statement to a tern
// error, which otherwise carries the whole SQL text.
func describePgError(err error) error {
	var pgErr migrate.MigrationPgError
	if !errors.As(err, &pgErr) || pgErr.PgError == nil {
		return err
	}
	where := ""
	if pgErr.Position != 0 {
		if line, err := migrate.ExtractErrorLine(pgErr.Sql, int(pgErr.Position)); err == nil {
			where = fmt.Sprintf(" at line %d: %s", line.LineNum, line.Text)
		}
	}
	name := pgErr.MigrationName
	if name == "" {
		name = "sql/install.sql"
	}
	return fmt.Errorf("%s: %w%s", name, pgErr.PgError, where)
}

func mustSub(dir string) fs.FS {
	sub, err := fs.Sub(FS, dir)
	if err != nil {
		panic(err) // dir is a constant naming an embedded directory
	}
	return sub
}
