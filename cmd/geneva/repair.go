package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

func newRetryCmd(opts *options) *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "retry WORKFLOW_ID [--from STEP]",
		Short: "Run a paused or ended workflow again, as a new workflow, from a step",
		Long: `Run a paused, finished or canceled workflow again as a new workflow of the
same type, hero and group, from STEP (by default the step that would run next:
the one that failed, for a workflow an error paused or canceled; the first,
for a finished one), scheduled now (geneva.retry_workflow). The new workflow's
retried_from names the original, whose history stays; a paused original is
canceled. Prints the new workflow's id.`,
		Example: `  geneva retry 42
  geneva retry 42 --from capture_payment`,
		Args: oneWorkflowID,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			id, err := parseWorkflowID(args[0])
			if err != nil {
				return err
			}
			retry, err := env.client.RetryWorkflow(ctx, id, from)
			if err != nil {
				return err
			}
			workflow, err := env.client.GetWorkflow(ctx, retry)
			if err != nil {
				return err
			}
			env.printf("workflow %d retries %d from %s\n", retry, id, report.Deref(workflow.NextStepName))
			return nil
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "the step to run first (default: the one that would run next)")
	return cmd
}

func newBulkCmd(opts *options) *cobra.Command {
	var (
		filters []string
		limit   int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "bulk VERB --filter KEY=VALUE...",
		Short: "Pause, resume, cancel, skip or retry every workflow matching a filter",
		Long: `Apply VERB (pause, resume, cancel, skip or retry) to every workflow matching
the filters, in id order, in batches of --limit workflows, each batch one call
of geneva.bulk_workflows in its own transaction. A workflow that refuses (not
in a state the verb takes) is reported and the others go on. Every act is in
the action log (geneva.action_log), with the bulk call that made it.

At least one filter is required: to act on every ongoing workflow, say
--filter state=ongoing. geneva ls --filter with the same filters lists the
workflows it would act on.

` + filterHelp,
		Example: `  geneva bulk retry --filter type=PaymentProcessing --filter error_class='*net.OpError'
  geneva bulk pause --filter group=acme --filter state=ongoing
  geneva bulk resume --filter state=paused --filter created_after=2030-01-01 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("bulk takes a verb: pause, resume, cancel, skip or retry")
			}
			return nil
		},
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			verb := goclient.BulkVerb(args[0])
			switch verb {
			case goclient.BulkPause, goclient.BulkResume, goclient.BulkCancel, goclient.BulkSkip, goclient.BulkRetry:
			default:
				return usagef("unknown verb %q: use pause, resume, cancel, skip or retry", args[0])
			}
			if len(filters) == 0 {
				return usagef("bulk needs at least one --filter (to act on every ongoing workflow: --filter state=ongoing)")
			}
			filter := &goclient.WorkflowFilter{}
			if err := parseFilter(filter, map[string]bool{}, filters); err != nil {
				return err
			}
			if limit <= 0 {
				return usagef("--limit must be positive")
			}
			total := &goclient.BulkResult{Verb: verb, Refused: []goclient.BulkRefusal{}}
			for {
				result, err := env.client.BulkWorkflows(ctx, verb, filter, limit)
				if err != nil {
					return err
				}
				total.Matched += result.Matched
				total.Acted += result.Acted
				total.Refused = append(total.Refused, result.Refused...)
				for from, to := range result.Retries {
					if total.Retries == nil {
						total.Retries = map[string]int64{}
					}
					total.Retries[from] = to
				}
				total.LastID, total.ActionID = result.LastID, result.ActionID
				if !result.More {
					break
				}
				filter.AfterID = *result.LastID
			}
			if asJSON { // (geneva.bulk_workflows' own names: BulkResult's json tags)
				enc := json.NewEncoder(env.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(total)
			}
			env.printf("%s: %d matched, %d acted, %d refused\n", verb, total.Matched, total.Acted, len(total.Refused))
			for _, r := range total.Refused {
				env.printf("  workflow %d refused (%s): %s\n", r.WorkflowID, r.Code, r.Message)
			}
			return nil
		}),
	}
	cmd.Flags().StringArrayVar(&filters, "filter", nil, "KEY=VALUE, repeatable: "+strings.Join(filterKeys, ", "))
	cmd.Flags().IntVar(&limit, "limit", 1000, "workflows per batch (one transaction each)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}
