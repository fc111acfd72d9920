package dbtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva"
)

// cellsDatabases numbers the databases Cells makes in this test binary.
var cellsDatabases atomic.Int64

// Cells makes n cell databases of partitions partitions and a router onto
// them on the test server (docs/cells.md), each a fresh database dropped at
// the test's end, and returns the cells' URLs and a pool on the router.
// Without PL/Proxy (Debian's postgresql-15-plproxy) the test skips, or fails
// under CI=true.
func Cells(t testing.TB, n, partitions int) (cellURLs []string, router *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	fatal := func(err error) {
		if err != nil {
			t.Helper()
			t.Fatalf("dbtest: cells: %v", err)
		}
	}
	if err := ensureRoles(ctx); err != nil {
		fatal(err)
	}
	admin, err := pgx.Connect(ctx, ServerURL())
	fatal(err)
	t.Cleanup(func() { admin.Close(ctx) })
	var available bool
	fatal(admin.QueryRow(ctx, "select exists (select from pg_available_extensions where name = 'plproxy')").Scan(&available))
	if !available {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PL/Proxy is not installed, and CI=true: the cells tests must run in CI (.ci/run installs Debian's postgresql-15-plproxy)")
		}
		t.Skip("SKIP: PL/Proxy is not installed in the test server's PostgreSQL (apt-get install postgresql-15-plproxy); it fails instead when CI=true")
	}
	database := func(name string) string {
		name = fmt.Sprintf("geneva_%s_%d_%d", name, os.Getpid(), cellsDatabases.Add(1))
		_, err := admin.Exec(ctx, "create database "+pgx.Identifier{name}.Sanitize())
		fatal(err)
		t.Cleanup(func() {
			_, _ = admin.Exec(ctx, "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)")
		})
		u, err := url.Parse(ServerURL())
		fatal(err)
		u.Path = "/" + name
		return u.String()
	}
	open := func(dbURL string) *pgxpool.Pool {
		pool, err := pgxpool.New(ctx, dbURL)
		fatal(err)
		t.Cleanup(pool.Close)
		return pool
	}
	for i := range n {
		cellURL := database("cell" + strconv.Itoa(i))
		pool, err := pgxpool.New(ctx, cellURL)
		fatal(err)
		_, err = geneva.Migrate(ctx, pool, &geneva.MigrateOpts{CellPartitions: partitions})
		pool.Close()
		fatal(err)
		cellURLs = append(cellURLs, cellURL)
	}
	router = open(database("router"))
	fatal(geneva.MigrateRouter(ctx, router, geneva.RouterOpts{Partitions: partitions, Cells: cellURLs}))
	return cellURLs, router
}
