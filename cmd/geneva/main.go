// Command geneva installs Geneva's schema and operates workflows.
//
//	geneva [--database-url URL] <command> [arguments]
//
// The database is --database-url, else the DATABASE_URL environment variable
// (a libpq URL).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva"
)

const usage = `usage: geneva [--database-url URL] <command> [arguments]

Commands:
  migrate   install or upgrade the schema (River's, then Geneva's) in place
  sql       print the single-file psql install script (dist/geneva.sql)

The database is --database-url, else $DATABASE_URL.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "geneva:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("geneva", flag.ContinueOnError)
	flags.Usage = func() { fmt.Fprint(flags.Output(), usage) }
	databaseURL := flags.String("database-url", os.Getenv("DATABASE_URL"), "libpq URL of the database")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() == 0 {
		flags.Usage()
		return flag.ErrHelp
	}

	command, rest := flags.Arg(0), flags.Args()[1:]
	switch command {
	case "sql":
		script, err := geneva.PsqlScript()
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, script)
		return err
	case "migrate":
		if len(rest) > 0 {
			return fmt.Errorf("migrate takes no arguments")
		}
		pool, err := connect(ctx, *databaseURL)
		if err != nil {
			return err
		}
		defer pool.Close()
		result, err := geneva.Migrate(ctx, pool, nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "River migrations applied: %v\nGeneva schema version: %d -> %d; functions installed\n",
			result.RiverVersions, result.SchemaVersionFrom, result.SchemaVersionTo)
		return nil
	default:
		flags.Usage()
		return fmt.Errorf("unknown command %q", command)
	}
}

func connect(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	if databaseURL == "" {
		return nil, errors.New("no database: set DATABASE_URL or pass --database-url")
	}
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}
