package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/goclient"
)

// environment is what a command runs with: its output and its database.
type environment struct {
	stdout io.Writer
	pool   *pgxpool.Pool
	client *goclient.Client
	// read is --read-url's pool (a hot standby), for the commands that
	// read from one; nil without it
	read *pgxpool.Pool
}

// reader is the pool to read from: --read-url's, else the database's.
func (env *environment) reader() *pgxpool.Pool {
	if env.read != nil {
		return env.read
	}
	return env.pool
}

func (env *environment) printf(format string, args ...any) {
	fmt.Fprintf(env.stdout, format, args...)
}

// open connects to databaseURL.
func (env *environment) open(ctx context.Context, databaseURL string) error {
	if databaseURL == "" {
		return usagef("no database: set DATABASE_URL or pass --database-url")
	}
	pool, err := connect(ctx, databaseURL, "the database")
	if err != nil {
		return err
	}
	env.pool = pool
	env.client = goclient.New(pool)
	return nil
}

// openRead connects to readURL (--read-url).
func (env *environment) openRead(ctx context.Context, readURL string) (err error) {
	env.read, err = connect(ctx, readURL, "--read-url")
	return err
}

// connect opens a pool on url and checks that it connects.
func connect(ctx context.Context, url, what string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", what, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to %s: %w", what, err)
	}
	return pool, nil
}

func (env *environment) migrate(ctx context.Context, cellPartitions int) error {
	// the roles' names: GENEVA_APP_ROLE, … (docs/security.md)
	result, err := geneva.Migrate(ctx, env.pool, &geneva.MigrateOpts{Roles: envRoles(), CellPartitions: cellPartitions})
	if err != nil {
		return err
	}
	river := "up to date"
	if n := len(result.RiverVersions); n > 0 {
		river = fmt.Sprintf("versions %d-%d applied", result.RiverVersions[0], result.RiverVersions[n-1])
	}
	env.printf("Schema: River %s; Geneva version %d -> %d; functions installed\n",
		river, result.SchemaVersionFrom, result.SchemaVersionTo)
	return nil
}

func (env *environment) close() {
	if env.pool != nil {
		env.pool.Close()
	}
	if env.read != nil {
		env.read.Close()
	}
}

// explain rewrites an error for people: the database's detail and hint
// follow its message, and a database without Geneva's schema says to run
// geneva migrate instead of naming a missing relation.
func explain(err error) error {
	var pgErr *pgconn.PgError
	if err == nil || !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case pgerrcode.UndefinedTable, pgerrcode.InvalidSchemaName, pgerrcode.UndefinedFunction:
		if pgErr.Code != pgerrcode.UndefinedFunction || strings.Contains(pgErr.Message, "geneva.") {
			return fmt.Errorf("the database lacks Geneva's schema (%s): run `geneva migrate` first", pgErr.Message)
		}
	}
	text := pgErr.Message
	if pgErr.Detail != "" {
		text += " (" + pgErr.Detail + ")"
	}
	if pgErr.Hint != "" {
		text += "; " + pgErr.Hint
	}
	return errors.New(text)
}
