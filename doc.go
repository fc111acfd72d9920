// Package geneva is a durable, multi-step workflow engine for Go and
// PostgreSQL, with the engine inside the database.
//
// Every decision about a workflow's state (which transitions are legal, what a
// step's outcome does, which exception policy applies, what runs next and
// when) is a PL/pgSQL function in the database schema geneva. Any SQL client
// can create, pause, resume, cancel and skip workflows; the Go worker only
// runs step code and reports what happened. River is the queue that triggers
// each step: every scheduling inserts its River job in the same transaction.
//
// # Installing the schema
//
// [Migrate] installs or upgrades everything in place, idempotently: River's
// own schema (Geneva's functions insert River jobs), Geneva's tables, and the
// functions from the sql/ directory:
//
//	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
//	...
//	if _, err := geneva.Migrate(ctx, pool, nil); err != nil {
//		...
//	}
//
// Without Go, dist/geneva.sql does the same with psql:
//
//	psql "$DATABASE_URL" -f dist/geneva.sql
//
// # Packages
//
// The root package holds the schema ([FS]), [Migrate] and [PsqlScript].
// Package goclient wraps the SQL API for Go applications and operators, and
// package worker runs step code (speaking the worker protocol, which the
// docs/sql-api.md documents for workers in other languages).
package geneva
