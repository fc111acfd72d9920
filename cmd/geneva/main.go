// Command geneva is the operator's tool for Geneva: it installs the schema,
// lists and shows workflows, pauses, resumes, cancels and skips them, lists
// what awaits an event and sends events, shows and defines limits, manages
// schedules, runs housekeeping, and serves the dashboard and the metrics. It
// runs no workflows: workers are programs of their own (examples/myworker;
// the example workflows' is `go run ./examples/demo --worker`).
//
//	geneva [--database-url URL] <command> [arguments]
//	geneva help [command]
//
// The database is --database-url, else the DATABASE_URL environment variable
// (a libpq URL).
//
// The command line is built with spf13/cobra: per-command help, usage lines
// and flags come from one declaration per command, `geneva help CMD`,
// `geneva CMD --help` and shell completion work without code of ours, and it
// is what River's own CLI uses, so operators of both find the same shape.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		// errors from the library already say where they come from
		message := err.Error()
		if !strings.HasPrefix(message, "geneva: ") {
			message = "geneva: " + message
		}
		fmt.Fprintln(os.Stderr, message)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run runs the command line args, writing to stdout and stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRootCmd(stdout)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return root.ExecuteContext(ctx)
}

// usageError is a command line the command cannot take (exit status 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// options are the flags every command takes.
type options struct {
	databaseURL string
}

func newRootCmd(stdout io.Writer) *cobra.Command {
	opts := &options{}
	root := &cobra.Command{
		Use:   "geneva",
		Short: "Operate Geneva's durable workflows in PostgreSQL",
		Long: `geneva installs Geneva's schema and operates its workflows: it lists and shows
them, pauses, resumes, cancels and skips them, lists what awaits an event and
sends events, shows and defines limits, manages schedules, lists the
operators' actions, and runs housekeeping.

The database is --database-url, else $DATABASE_URL (a libpq URL).

Go steps run in workers, programs of their own (examples/myworker/main.go
is one; the demo is one too: go run ./examples/demo --worker). HTTP steps,
in any language, run in geneva worker.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// an unknown command is a usage error, not a silent help page
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q (see geneva help)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	envFlag(root.PersistentFlags(), &opts.databaseURL, "database-url", "DATABASE_URL", "libpq URL of the database")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
	})
	root.CompletionOptions.HiddenDefaultCmd = true

	root.AddGroup(
		&cobra.Group{ID: "inspect", Title: "Inspecting workflows:"},
		&cobra.Group{ID: "operate", Title: "Operating workflows:"},
		&cobra.Group{ID: "install", Title: "Installing and serving:"},
	)
	for _, cmd := range []*cobra.Command{
		newListCmd(opts), newShowCmd(opts), newStuckCmd(opts), newStatsCmd(opts), newEventsCmd(opts), newLimitsCmd(opts),
		newDefinitionsCmd(opts), newActionsCmd(opts), newDashboardCmd(opts),
	} {
		cmd.GroupID = "inspect"
		root.AddCommand(cmd)
	}
	for _, cmd := range []*cobra.Command{
		newCreateCmd(opts),
		newOperateCmd(opts, "pause", "Pause a workflow (at the step boundary when a step runs)"),
		newOperateCmd(opts, "resume", "Resume a paused workflow, or withdraw a requested pause"),
		newOperateCmd(opts, "cancel", "Cancel a workflow (at the step boundary when a step runs)"),
		newOperateCmd(opts, "skip", "Skip the step a paused or ready workflow would run next"),
		newRunNowCmd(opts), newRetryCmd(opts), newBulkCmd(opts), newSendEventCmd(opts), newScheduleCmd(opts),
		newHousekeepCmd(opts), newArchiveCmd(opts), newLimitCmd(opts), newDefineCmd(opts),
	} {
		cmd.GroupID = "operate"
		root.AddCommand(cmd)
	}
	for _, cmd := range []*cobra.Command{
		newMigrateCmd(opts), newSQLCmd(), newMetricsCmd(opts), newWorkerCmd(opts), newMovePartitionCmd(opts),
	} {
		cmd.GroupID = "install"
		root.AddCommand(cmd)
	}
	return root
}

// envFlag declares a string flag whose default is the environment variable
// env, read when the flag is declared, and whose help names the variable,
// never its value (a password in a URL, a token).
func envFlag(f *pflag.FlagSet, p *string, name, env, usage string) {
	f.StringVar(p, name, os.Getenv(env), usage+" (default: from $"+env+")")
	f.Lookup(name).DefValue = ""
}

// noArgs refuses arguments, naming the command.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments", cmd.Name())
	}
	return nil
}

// oneWorkflowID requires exactly one argument, a workflow id.
func oneWorkflowID(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("%s takes one workflow id", cmd.Name())
	}
	return nil
}

// withReadEnv is withEnv for a command that may read from --read-url (a hot
// standby): it opens readURL when given, and the database unless the
// command reads only (readOnly) and readURL is given.
func withReadEnv(opts *options, readURL *string, readOnly func() bool, f func(ctx context.Context, env *environment, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		env := &environment{stdout: cmd.OutOrStdout()}
		defer env.close()
		if *readURL != "" {
			if err := env.openRead(ctx, *readURL); err != nil {
				return err
			}
		}
		if *readURL == "" || !readOnly() {
			if err := env.open(ctx, opts.databaseURL); err != nil {
				return err
			}
		}
		return explain(f(ctx, env, args))
	}
}

// withEnv turns a function of an environment into a cobra RunE: it opens the
// database and closes it after.
func withEnv(opts *options, f func(ctx context.Context, env *environment, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		env := &environment{stdout: cmd.OutOrStdout()}
		if err := env.open(ctx, opts.databaseURL); err != nil {
			return err
		}
		defer env.close()
		return explain(f(ctx, env, args))
	}
}
