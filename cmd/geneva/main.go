// Command geneva installs Geneva's schema, runs a worker for the example
// workflows, and operates workflows from the command line.
//
//	geneva [--database-url URL] <command> [arguments]
//
// The database is --database-url, else the DATABASE_URL environment variable
// (a libpq URL). Without either, `demo` and `worker` start a throwaway
// PostgreSQL server and remove it when they end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

const usage = `usage: geneva [--database-url URL] <command> [arguments]

Commands:
  demo                  run the example workflows and show the dashboard
  worker                run a worker for the example workflows until interrupted
  migrate               install or upgrade the schema (River's, then Geneva's) in place
  ls [flags]            workflow counts, then workflows (--state, --type, --hero TYPE:ID, --limit);
                        with --state paused, why each paused
  show ID               a workflow and the timeline of its steps
  stuck                 executions housekeeping would recover as stuck
  stats [TYPE...]       per type and step over the last day: outcomes, queue lag, run time
  pause ID              pause a workflow (at the step boundary when a step runs)
  resume ID             resume a paused workflow
  cancel ID             cancel a workflow
  skip ID               skip the step a workflow would run next
  run-now ID [STEP]     run a workflow's next step (or STEP) now instead of waiting
  housekeep [flags]     delete old workflows and recover stuck steps, until done
  sql                   print the single-file psql install script (dist/geneva.sql)

The database is --database-url, else $DATABASE_URL; without either, demo and
worker start a throwaway PostgreSQL server.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		// errors from the library already say where they come from
		message := err.Error()
		if !strings.HasPrefix(message, "geneva: ") {
			message = "geneva: " + message
		}
		fmt.Fprintln(os.Stderr, message)
		os.Exit(1)
	}
}

// command is one of the binary's commands.
type command struct {
	// run does the work; args are the command's own arguments.
	run func(ctx context.Context, env *environment, args []string) error
	// throwaway: without a database URL, start a throwaway server.
	throwaway bool
	// noDatabase: the command needs no database.
	noDatabase bool
}

var commands = map[string]command{
	"demo":      {run: runDemo, throwaway: true},
	"worker":    {run: runWorker, throwaway: true},
	"migrate":   {run: runMigrate},
	"ls":        {run: runList},
	"show":      {run: runShow},
	"stuck":     {run: runStuck},
	"stats":     {run: runStats},
	"pause":     {run: operate("pause")},
	"resume":    {run: operate("resume")},
	"cancel":    {run: operate("cancel")},
	"skip":      {run: operate("skip")},
	"run-now":   {run: runNow},
	"housekeep": {run: runHousekeep},
	"sql":       {run: runSQL, noDatabase: true},
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

	name := flags.Arg(0)
	cmd, ok := commands[name]
	if !ok {
		flags.Usage()
		return fmt.Errorf("unknown command %q", name)
	}
	env := &environment{stdout: stdout}
	if !cmd.noDatabase {
		if err := env.open(ctx, *databaseURL, cmd.throwaway); err != nil {
			return err
		}
		defer env.close()
	}
	return cmd.run(ctx, env, flags.Args()[1:])
}
