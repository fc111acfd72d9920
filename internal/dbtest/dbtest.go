// Package dbtest gives each test its own database with Geneva's schema
// installed, cloned by pgtestdb from a template that is migrated once per
// content of migrations/ and sql/ (and River's migrations).
//
// Geneva's schema is installed by its owner, pgtestdb's test role, with the
// test clock on (`select geneva.allow_fake_clock(true)`: sessions may set
// geneva.fake_now). The connections of NewConfig, NewPool and NewConn are the
// owner's; NewPoolAs and NewConnAs connect as login roles that are members of
// Geneva's roles (App, Operator, Worker, Reader), for tests that act as an
// application, operator, worker or dashboard with no more privilege than
// those.
//
// The server is TEST_DATABASE_URL when it is set (a libpq URL of a role that
// may create roles and databases). Otherwise Main starts a throwaway server
// for the test binary (see package pgtemp); `make test` starts one for the
// whole run and sets TEST_DATABASE_URL.
package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // pgtestdb opens database/sql connections with the "pgx" driver
	"github.com/peterldowns/pgtestdb"
	"github.com/peterldowns/pgtestdb/migrators/common"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/internal/pgtemp"
)

// EnvURL names the environment variable that gives the test server.
const EnvURL = "TEST_DATABASE_URL"

// migratorRev is part of the template's hash; bump it when Migrate's logic
// changes in a way the hashed files do not show.
const migratorRev = "3"

// Role is a login role of the test server, a member of one of Geneva's
// roles (with their default names).
type Role string

// The login roles, created on the test server when missing.
const (
	App      Role = "geneva_test_app"      // member of geneva_app
	Operator Role = "geneva_test_operator" // member of geneva_operator
	Worker   Role = "geneva_test_worker"   // member of geneva_worker
	Reader   Role = "geneva_test_reader"   // member of geneva_reader
	// Harness plays an application, an operator and a worker on one
	// connection, as workertest's harness does.
	Harness Role = "geneva_test_harness" // member of geneva_operator and geneva_worker
)

// rolePassword is every test login role's password (for servers that ask).
const rolePassword = "geneva_test"

// memberOf maps each login role to the Geneva roles it is granted.
var memberOf = map[Role][]string{
	App:      {geneva.DefaultRoles.App},
	Operator: {geneva.DefaultRoles.Operator},
	Worker:   {geneva.DefaultRoles.Worker},
	Reader:   {geneva.DefaultRoles.Reader},
	Harness:  {geneva.DefaultRoles.Operator, geneva.DefaultRoles.Worker},
}

var (
	rolesOnce sync.Once
	rolesErr  error
)

// ensureRoles creates Geneva's NOLOGIN roles and the test login roles on the
// server, as the server's URL's role (the migration's role, pgtestdb's, may
// not create roles). Test binaries run in parallel: a role another created
// first is fine.
func ensureRoles(ctx context.Context) error {
	rolesOnce.Do(func() {
		conn, err := pgx.Connect(ctx, ServerURL())
		if err != nil {
			rolesErr = err
			return
		}
		defer conn.Close(ctx)
		for login, groups := range memberOf {
			var statements, names []string
			for _, group := range groups {
				statements = append(statements, fmt.Sprintf("create role %s nologin", pgx.Identifier{group}.Sanitize()))
				names = append(names, pgx.Identifier{group}.Sanitize())
			}
			statements = append(statements, fmt.Sprintf("create role %s login password '%s' in role %s",
				pgx.Identifier{string(login)}.Sanitize(), rolePassword, strings.Join(names, ", ")))
			for _, statement := range statements {
				_, err := conn.Exec(ctx, `do $$ begin `+statement+`; exception when duplicate_object or unique_violation then null; end; $$`)
				if err != nil {
					rolesErr = fmt.Errorf("creating the test roles: %w", err)
					return
				}
			}
		}
	})
	return rolesErr
}

// Main runs a package's tests, first starting a throwaway server when
// TEST_DATABASE_URL is not set. Call it from TestMain:
//
//	func TestMain(m *testing.M) { dbtest.Main(m) }
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv(EnvURL) == "" {
		srv, err := pgtemp.Start(context.Background(), nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dbtest:", err)
			return 1
		}
		defer srv.Stop()
		os.Setenv(EnvURL, srv.URL("postgres"))
	}
	return m.Run()
}

// NewConfig returns the connection settings of a new database with Geneva's
// schema, dropped when the test passes (kept for inspection when it fails).
func NewConfig(t testing.TB) *pgtestdb.Config {
	t.Helper()
	conf, err := serverConfig()
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	if err := ensureRoles(context.Background()); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return pgtestdb.Custom(t, conf, migrator{})
}

// URLAs returns the URL of the database of conf for the login role.
func URLAs(conf *pgtestdb.Config, role Role) string {
	as := *conf
	as.User = string(role)
	as.Password = rolePassword
	return as.URL()
}

// NewPoolAs returns a pool on the database of conf connected as the login
// role, closed when the test ends.
func NewPoolAs(t testing.TB, conf *pgtestdb.Config, role Role) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), URLAs(conf, role))
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NewConnAs returns one connection on the database of conf as the login
// role, closed when the test ends.
func NewConnAs(t testing.TB, conf *pgtestdb.Config, role Role) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), URLAs(conf, role))
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// NewPool returns a pool on a new database with Geneva's schema, closed when
// the test ends.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return NewPoolConfig(t, NewConfig(t))
}

// NewPoolConfig returns a pool on the database of conf, closed when the test
// ends.
func NewPoolConfig(t testing.TB, conf *pgtestdb.Config) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), conf.URL())
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NewConn returns one connection on the database of conf, closed when the test
// ends.
func NewConn(t testing.TB, conf *pgtestdb.Config) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), conf.URL())
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// ServerURL returns the URL of the test server (its maintenance database).
func ServerURL() string { return os.Getenv(EnvURL) }

func serverConfig() (pgtestdb.Config, error) {
	raw := os.Getenv(EnvURL)
	if raw == "" {
		return pgtestdb.Config{}, fmt.Errorf("%s is not set; run the tests with `make test`, or call dbtest.Main from TestMain", EnvURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return pgtestdb.Config{}, fmt.Errorf("%s must be a postgres:// URL", EnvURL)
	}
	password, _ := u.User.Password()
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	database := strings.TrimPrefix(u.Path, "/")
	if database == "" {
		database = "postgres"
	}
	options := u.RawQuery
	if options == "" {
		options = "sslmode=disable"
	}
	return pgtestdb.Config{
		DriverName:                "pgx",
		Host:                      u.Hostname(),
		Port:                      port,
		User:                      u.User.Username(),
		Password:                  password,
		Database:                  database,
		Options:                   options,
		ForceTerminateConnections: true,
	}, nil
}

// migrator installs Geneva's schema into pgtestdb's template database.
type migrator struct{}

// Hash covers every file of migrations/ and sql/ and River's migrations, so
// any change to them makes a new template.
func (migrator) Hash() (string, error) {
	h := common.NewRecursiveHash(common.Field("rev", migratorRev))
	err := fs.WalkDir(geneva.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(geneva.FS, path)
		if err != nil {
			return err
		}
		h.Add([]byte(path))
		h.Add(body)
		return nil
	})
	if err != nil {
		return "", err
	}
	riverMigrator, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		return "", err
	}
	for _, migration := range riverMigrator.AllVersions() {
		h.Add([]byte(migration.SQLUp))
	}
	return h.String(), nil
}

func (migrator) Migrate(ctx context.Context, _ *sql.DB, conf pgtestdb.Config) error {
	pool, err := pgxpool.New(ctx, conf.URL())
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := geneva.Migrate(ctx, pool, nil); err != nil {
		return err
	}
	_, err = pool.Exec(ctx, "select geneva.allow_fake_clock(true)")
	return err
}

// ExampleTB is a testing.TB stand-in for runnable examples, which have none:
// it panics on failure, and it never cleans up (the example's database stays
// until the test server goes).
func ExampleTB() testing.TB { return exampleTB{} }

type exampleTB struct{ testing.TB }

func (exampleTB) Helper()                           {}
func (exampleTB) Cleanup(func())                    {}
func (exampleTB) Failed() bool                      { return false }
func (exampleTB) Logf(string, ...any)               {}
func (exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
