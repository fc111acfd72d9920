package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/internal/report"
	"github.com/geneva-dev/geneva/worker"
)

func newDefineCmd(opts *options) *cobra.Command {
	var (
		asJSON  bool
		version int
	)
	cmd := &cobra.Command{
		Use:   "define TYPE {FILE.json | --version N}",
		Short: "Define a workflow type from a JSON file (- for standard input), or as an earlier version",
		Long: `Register a workflow type's definition (geneva.define_workflow), or replace it:
the JSON of docs/sql-api.md and docs/http-steps.md. An identical definition
changes nothing; a changed one becomes the type's next version, and the
previous ones are kept (geneva.definition_versions). Running workflows take
their next step from the new one.

With --version N instead of a file, define the type again as its version N
was (a rollback): the stored definition becomes the next version.

Operators (deployers) may define types whose every step is an HTTP step; a
type with a Go step is defined by its worker.`,
		Example: `  geneva define py_invoice examples/http/python/py_invoice.json
  cat invoice.json | geneva define py_invoice - --json
  geneva define py_invoice --version 3`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("version") {
				if len(args) != 1 {
					return usagef("define --version N takes a workflow type only")
				}
				if version < 1 {
					return usagef("--version takes a version number, from 1")
				}
				return nil
			}
			if len(args) != 2 {
				return usagef("define takes a workflow type and a JSON file")
			}
			return nil
		},
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			if len(args) == 1 {
				if err := env.client.DefineWorkflowVersion(ctx, args[0], version); err != nil {
					return err
				}
			} else {
				definition, err := readDefinition(args[1], os.Stdin)
				if err != nil {
					return err
				}
				if err := env.client.DefineWorkflow(ctx, args[0], definition); err != nil {
					return err
				}
			}
			versions, err := env.client.DefinitionVersions(ctx, args[0])
			if err != nil {
				return err
			}
			if len(versions) == 0 {
				return fmt.Errorf("defined %s, but it has no version", args[0])
			}
			current := versions[0]
			if asJSON {
				return report.JSON(env.stdout, current)
			}
			env.printf("Defined %s: version %d, %s (%d over HTTP): %s\n", current.WorkflowType, current.Version,
				report.Count(len(current.StepNames), "step", "steps"), current.HTTPSteps, strings.Join(current.StepNames, ", "))
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the current version as JSON")
	cmd.Flags().IntVar(&version, "version", 0, "define the type as this earlier version of it was")
	return cmd
}

// readDefinition reads a definition's JSON from a file, or from stdin for
// "-", and checks that it is JSON (SQL checks the rest).
func readDefinition(path string, stdin io.Reader) (json.RawMessage, error) {
	var (
		data []byte
		err  error
	)
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the definition: %w", err)
	}
	if !json.Valid(data) {
		return nil, usagef("%s is not JSON", path)
	}
	return data, nil
}

func newDefinitionsCmd(opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "definitions [TYPE]",
		Short: "Each workflow type's definition: its steps and what each does, its versions",
		Long: `Print each workflow type's current definition (workflows take their next step
from it): its version, when and by which login role it was defined, what it
decides for the whole type (concurrency, rate limit, exception policies),
then its steps in run order, one a line (geneva.definition_steps): the wait
before each, the event it awaits (how long, and what its timeout does), the
named limits it is held to, its queue, an HTTP step's endpoint, its own
exception policies (tried before the type's) and its skip_if; then its
earlier versions (geneva.definition_versions). With TYPE, that type's only;
--json prints every version with the definition itself.`,
		Example: `  geneva definitions
  geneva definitions py_invoice --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("definitions takes at most one workflow type")
			}
			return nil
		},
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			workflowType := ""
			if len(args) == 1 {
				workflowType = args[0]
			}
			versions, err := env.client.DefinitionVersions(ctx, workflowType)
			if err != nil {
				return err
			}
			if asJSON {
				return report.JSON(env.stdout, report.OrEmpty(versions))
			}
			steps, err := env.client.DefinitionSteps(ctx, workflowType)
			if err != nil {
				return err
			}
			return report.Definitions(env.stdout, versions, steps)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts, with each definition")
	return cmd
}

func newWorkerCmd(opts *options) *cobra.Command {
	var (
		queues, types, allowHosts []string
		cellURLs                  []string
		concurrency               int
		cmd                       *cobra.Command
		newWorker                 func(*pgxpool.Pool) (*worker.Worker, error)
		describe                  func() string
	)
	cmd = &cobra.Command{
		Use:   "worker",
		Short: "Run the HTTP steps of every workflow type in the database",
		Long: `Run a worker for HTTP steps (steps with "http" in their definition, in any
language): it takes their jobs from the queues (geneva_http unless the steps
name another), POSTs each execution to its step's endpoint and records the
reply, until interrupted (SIGINT or SIGTERM: it stops gracefully, finishing
the requests in flight). It takes part in housekeeping and fires schedules,
as every worker does.

GENEVA_HTTP_SECRET, when set, signs every request (the Geneva-Signature
header, over the method, the URL, the time and the body; see
docs/http-steps.md); GENEVA_HTTP_SECRET_NEXT, when set, signs it too,
while the endpoints move to it.

The worker is an HTTP client where it runs: it connects only to public
addresses unless --allow-hosts (else $GENEVA_HTTP_ALLOW_HOSTS, comma
separated) allows more: host names, IP addresses, CIDR blocks, or * for any.
Loopback, link-local (169.254.169.254, the cloud's metadata service),
private and other special addresses are refused at each connection, after
DNS, redirects included: the step fails with http.destination_refused.

Go steps run in the application's own workers.`,
		Example: `  GENEVA_HTTP_SECRET=s3cret geneva worker
  geneva worker --allow-hosts 127.0.0.1        # endpoints on this machine
  geneva worker --allow-hosts hooks.internal,10.1.0.0/16
  geneva worker --queues geneva_http,mail --types py_invoice --concurrency 50`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(cellURLs) > 0 {
				return runCellWorkers(c, cellURLs, newWorker, describe)
			}
			return withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
				w, err := newWorker(env.pool)
				if err != nil {
					return err
				}
				ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
				if err := w.Start(ctx); err != nil {
					return err
				}
				env.printf("%s Stop with Ctrl-C.\n", describe())
				<-ctx.Done()
				stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
				defer cancel()
				env.printf("Stopping: finishing the requests in flight.\n")
				return w.Stop(stopCtx)
			})(c, args)
		},
	}
	newWorker = func(pool *pgxpool.Pool) (*worker.Worker, error) {
		if !cmd.Flags().Changed("allow-hosts") {
			allowHosts = splitList(os.Getenv("GENEVA_HTTP_ALLOW_HOSTS"))
		}
		secret, next := envSecret("GENEVA_HTTP_SECRET"), envSecret("GENEVA_HTTP_SECRET_NEXT")
		return worker.New(pool, &worker.Config{
			MaxWorkers: concurrency,
			HTTP: &worker.HTTPConfig{Secret: secret, NextSecret: next, AllowHosts: allowHosts,
				Queues: queues, Types: types},
		})
	}
	describe = func() string {
		secret, next := envSecret("GENEVA_HTTP_SECRET"), envSecret("GENEVA_HTTP_SECRET_NEXT")
		signed := "unsigned (GENEVA_HTTP_SECRET is not set)"
		switch {
		case secret != nil && next != nil:
			signed = "signed with the secret and the next one"
		case secret != nil || next != nil:
			signed = "signed"
		}
		destinations := "public addresses only (--allow-hosts allows others)"
		if slices.Contains(allowHosts, "*") {
			destinations = "any address"
		} else if len(allowHosts) > 0 {
			destinations = "public addresses and " + strings.Join(allowHosts, ", ")
		}
		return fmt.Sprintf("Running HTTP steps from queues %s, %d at once, requests %s, to %s.",
			strings.Join(orDefault(queues, worker.DefaultHTTPQueue), ", "), concurrency, signed, destinations)
	}
	cmd.Flags().StringSliceVar(&queues, "queues", nil, "the queues of the HTTP steps to run (default geneva_http)")
	cmd.Flags().StringSliceVar(&types, "types", nil, "run only these workflow types' HTTP steps (default: every type)")
	cmd.Flags().IntVar(&concurrency, "concurrency", 10, "how many requests run at once, per queue")
	cmd.Flags().StringSliceVar(&cellURLs, "cells", nil, "run a worker for each of these cells' URLs, comma separated, in this one process (docs/cells.md)")
	cmd.Flags().StringSliceVar(&allowHosts, "allow-hosts", nil,
		"host names, IP addresses and CIDR blocks the requests may reach besides public addresses, or * for any (default $GENEVA_HTTP_ALLOW_HOSTS)")
	return cmd
}

// envSecret is a secret from the environment; nil when unset or empty.
func envSecret(name string) []byte {
	if s := os.Getenv(name); s != "" {
		return []byte(s)
	}
	return nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(list string) []string {
	var items []string
	for item := range strings.SplitSeq(list, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

func orDefault(list []string, value string) []string {
	if len(list) == 0 {
		return []string{value}
	}
	return list
}
