package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

func newActionsCmd(opts *options) *cobra.Command {
	var (
		params        goclient.ActionLogParams
		after, before string
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "actions [flags]",
		Short: "The operators' actions: who did what to which workflow, newest first",
		Long: `List the operators' actions (the geneva.action_log view), newest first: when,
which login role (and the person it named, the dashboard's signed-in user,
in parentheses), which verb on which workflow, with what arguments and what
came of it. The flags narrow the list: --verb (pause_workflow, send_event,
bulk_workflows, ...), --by (a login role or an actor), --workflow, and a
time range: --after and --before take a time (2030-01-31, 2030-01-31T14:00,
RFC 3339; UTC unless it says) or a duration ago (90m, 24h). --before-id
pages: pass the last action's id to list the older ones.`,
		Example: `  geneva actions
  geneva actions --verb cancel_workflow --after 24h
  geneva actions --by ann --json
  geneva actions --workflow 42`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			now := time.Now()
			var err error
			if params.After, err = parseWhen(after, now); err != nil {
				return usagef("--after: %v", err)
			}
			if params.Before, err = parseWhen(before, now); err != nil {
				return usagef("--before: %v", err)
			}
			if params.Limit <= 0 {
				return usagef("--limit takes a positive number")
			}
			actions, err := env.client.ActionLog(ctx, &params)
			if err != nil {
				return err
			}
			if asJSON {
				return report.JSON(env.stdout, report.OrEmpty(actions))
			}
			report.ActionLog(env.stdout, actions, true)
			if len(actions) == params.Limit {
				env.printf("\nThe newest %d (--limit); older: --before-id %d\n", len(actions), actions[len(actions)-1].ActionID)
			}
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVar(&params.Verb, "verb", "", "only this verb's actions (pause_workflow, send_event, ...)")
	f.StringVar(&params.By, "by", "", "only the actions of this login role or actor")
	f.Int64Var(&params.WorkflowID, "workflow", 0, "only the actions on this workflow")
	f.StringVar(&after, "after", "", "only actions at or after this time, or this long ago (24h)")
	f.StringVar(&before, "before", "", "only actions before this time, or this long ago")
	f.Int64Var(&params.BeforeID, "before-id", 0, "only actions older than this one (the next page)")
	f.IntVar(&params.Limit, "limit", 50, "how many to list at most")
	f.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// parseWhen reads a time a flag gives: a duration ago (24h), RFC 3339, or a
// date and time in UTC (2006-01-02, 2006-01-02T15:04, 2006-01-02 15:04:05);
// nil for "".
func parseWhen(s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return nil, usagef("%q is a negative duration", s)
		}
		t := now.Add(-d)
		return &t, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05",
		"2006-01-02 15:04", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return &t, nil
		}
	}
	return nil, usagef("%q is neither a time (2006-01-02T15:04, UTC) nor a duration ago (24h)", s)
}
