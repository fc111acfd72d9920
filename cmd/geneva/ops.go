package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

func newSQLCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sql",
		Short: "Print the single-file psql install script (dist/geneva.sql)",
		Long: `Print the single-file install script, the same as dist/geneva.sql: psql -f
installs or upgrades Geneva's and River's schema with it, without Go.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			script, err := geneva.PsqlScript()
			if err != nil {
				return err
			}
			_, err = io.WriteString(cmd.OutOrStdout(), script)
			return err
		},
	}
}

func newMigrateCmd(opts *options) *cobra.Command {
	var cells migrateCells
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Install or upgrade the schema (River's, then Geneva's) in place",
		Long: `Install or upgrade River's schema, then Geneva's tables and functions, in
place. Safe to run again: it applies only what the database lacks and
reinstalls every function.

With --cell --partitions P, the database is a cell (docs/cells.md): a whole
Geneva whose ids carry their partition (id & (P-1)). With --router
--partitions P --cells URL,URL,..., it is a router: PL/Proxy functions of the
public API's names that run them in the cell of the hero or the id, the
partitions mapped onto the cells in turn.`,
		Example: `  geneva migrate
  geneva migrate --cell --partitions 64
  geneva migrate --router --partitions 64 --cells postgres://geneva@cell1/geneva,postgres://geneva@cell2/geneva`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			return env.migrateCells(ctx, cells)
		}),
	}
	cmd.Flags().BoolVar(&cells.cell, "cell", false, "install a cell of --partitions partitions (docs/cells.md)")
	cmd.Flags().BoolVar(&cells.router, "router", false, "install a router onto --cells (docs/cells.md)")
	cmd.Flags().IntVar(&cells.partitions, "partitions", 0, "the number of partitions, a power of two (with --cell or --router)")
	cmd.Flags().StringSliceVar(&cells.cells, "cells", nil, "the cells' URLs, comma separated (with --router)")
	return cmd
}

func newListCmd(opts *options) *cobra.Command {
	var (
		filter  goclient.WorkflowFilter
		filters []string
		state   string
		hero    string
		limit   int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "ls [flags]",
		Short: "Workflow counts by type and state, then the newest workflows",
		Long: `Print the number of workflows by type and state, then the newest workflows
matching the filter (geneva.list_workflows). With --state paused alone (or
with --type), print why each paused (the geneva.paused_workflows view)
instead. --state, --type, --hero and --group are the keys state, type,
hero_type and hero_id, and group.

` + filterHelp,
		Example: `  geneva ls
  geneva ls --state paused --type PaymentProcessing
  geneva ls --hero User:42 --json
  geneva ls --group acme --state ready
  geneva ls --filter error_class='*net.OpError' --filter created_after=2030-01-01`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			seen := map[string]bool{}
			for key, value := range map[string]string{"state": state, "type": filter.WorkflowType, "group": filter.Group} {
				seen[key] = value != ""
			}
			filter.State = goclient.WorkflowState(state)
			if hero != "" {
				heroType, heroID, ok := strings.Cut(hero, ":")
				if !ok || heroType == "" || heroID == "" {
					return usagef("--hero takes TYPE:ID, as User:42")
				}
				filter.HeroType, filter.HeroID = heroType, heroID
				seen["hero_type"], seen["hero_id"] = true, true
			}
			if err := parseFilter(&filter, seen, filters); err != nil {
				return err
			}
			return list(ctx, env, &filter, limit, asJSON)
		}),
	}
	cmd.Flags().StringVar(&state, "state", "", "only workflows in this state (ready, performing, paused, finished, canceled, ongoing)")
	cmd.Flags().StringVar(&filter.WorkflowType, "type", "", "only workflows of this type (the counts too)")
	cmd.Flags().StringVar(&hero, "hero", "", "only workflows of this hero, as TYPE:ID")
	cmd.Flags().StringVar(&filter.Group, "group", "", "only workflows of this group (a tenant)")
	cmd.Flags().StringArrayVar(&filters, "filter", nil, "KEY=VALUE, repeatable: "+strings.Join(filterKeys, ", "))
	cmd.Flags().IntVar(&limit, "limit", 20, "how many workflows to list")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func list(ctx context.Context, env *environment, filter *goclient.WorkflowFilter, limit int, asJSON bool) error {
	counts, err := workflowCounts(ctx, env, filter.WorkflowType)
	if err != nil {
		return err
	}
	// why each paused, when the filter is the state paused, of a type or not
	whyPaused := *filter == goclient.WorkflowFilter{State: goclient.StatePaused, WorkflowType: filter.WorkflowType}
	var (
		paused []*goclient.PausedWorkflow
		listed []*goclient.ListedWorkflow
	)
	if whyPaused {
		paused, err = env.client.PausedWorkflows(ctx, &goclient.PausedWorkflowsParams{WorkflowType: filter.WorkflowType})
	} else {
		listed, err = env.client.ListWorkflows(ctx, filter, limit)
	}
	if err != nil {
		return err
	}

	if asJSON {
		out := map[string]any{"counts": counts}
		if whyPaused {
			out["paused"] = report.OrEmpty(paused)
		} else {
			out["workflows"] = report.OrEmpty(listed)
		}
		return report.JSON(env.stdout, out)
	}
	if err := report.Counts(env.stdout, counts); err != nil {
		return err
	}
	env.printf("\n")
	if whyPaused {
		return report.Paused(env.stdout, paused)
	}
	workflows := make([]*goclient.Workflow, len(listed))
	for i, l := range listed {
		workflows[i] = &l.Workflow
	}
	report.Workflows(env.stdout, workflows)
	return nil
}

// workflowCounts reads the geneva.workflow_counts view, of one type unless
// workflowType is empty.
func workflowCounts(ctx context.Context, env *environment, workflowType string) ([]*goclient.WorkflowCount, error) {
	counts, err := env.client.WorkflowCounts(ctx)
	if err != nil || workflowType == "" {
		return counts, err
	}
	return slices.DeleteFunc(counts, func(c *goclient.WorkflowCount) bool { return c.WorkflowType != workflowType }), nil
}

func newShowCmd(opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show WORKFLOW_ID",
		Short: "A workflow, the timeline of its step executions and the operators' actions on it",
		Args:  oneWorkflowID,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			id, err := parseWorkflowID(args[0])
			if err != nil {
				return err
			}
			workflow, err := env.client.GetWorkflow(ctx, id)
			if err != nil {
				return err
			}
			timeline, err := env.client.Timeline(ctx, id)
			if err != nil {
				return err
			}
			retries, err := env.client.Retries(ctx, id)
			if err != nil {
				return err
			}
			actions, err := env.client.ActionLog(ctx, &goclient.ActionLogParams{WorkflowID: id})
			if err != nil {
				return err
			}
			// why a ready workflow's step has not started (none: it is in
			// its queue's line, or not ready)
			blockers, err := env.client.WorkflowBlockers(ctx, &goclient.WorkflowBlockersParams{WorkflowID: id})
			if err != nil {
				return err
			}
			var children []goclient.ChildCount
			if workflow.Children > 0 {
				if children, err = env.client.ChildCounts(ctx, id); err != nil {
					return err
				}
			}
			if asJSON {
				return report.JSON(env.stdout, map[string]any{
					"workflow": workflow, "timeline": report.OrEmpty(timeline),
					"retries": report.OrEmpty(retries), "actions": report.OrEmpty(actions),
					"blockers": report.OrEmpty(blockers),
					"children": report.OrEmpty(children),
				})
			}
			report.Workflow(env.stdout, workflow, blockers, timeline)
			report.Lineage(env.stdout, workflow, retries)
			report.Family(env.stdout, workflow, children)
			report.Actions(env.stdout, actions)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func newStuckCmd(opts *options) *cobra.Command {
	var (
		asJSON, runaways, unserved bool
		inProgress, sched          time.Duration
		cmd                        *cobra.Command
	)
	cmd = &cobra.Command{
		Use:   "stuck [--stuck-in-progress D] [--stuck-scheduled D] [--runaways | --unserved]",
		Short: "Executions housekeeping would recover as stuck; runaway chains; steps due on a queue no worker serves",
		Long: `List the executions housekeeping would recover as stuck (the
geneva.stuck_executions view): in progress with no sign of life, or scheduled
and overdue, for longer than the housekeeping settings allow (an hour and 15
minutes unless an operator set others: geneva housekeep settings), or than
the thresholds given, as the dashboard's Stuck page takes them: what
geneva housekeep with the same flags would recover. Then the runaway chains
and the steps due on a queue no worker serves, if any.

With --runaways, only the runaway chains: the ongoing workflows housekeeping
flagged (geneva.runaway_workflows) for more executions than the setting
runaway_executions, or one step run more than runaway_repeats times in a row
(1000 and 100 unless an operator set others: geneva housekeep settings).
They are not stopped: look at them, and end or redesign what loops.

With --unserved, only the scheduled executions that are due on a queue no
worker serves (geneva.workflow_blockers, reason queue): no worker reported
the queue lately, or it is paused in River. Housekeeping does not recover
them; start a worker on the queue, or resume it.`,
		Example: `  geneva stuck
  geneva stuck --stuck-in-progress 10m --stuck-scheduled 2m --json
  geneva stuck --runaways --json
  geneva stuck --unserved`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			if runaways && unserved {
				return usagef("--runaways and --unserved each list one thing: give one")
			}
			unservedParams := &goclient.WorkflowBlockersParams{Reason: goclient.BlockerQueue}
			if unserved {
				list, err := env.client.WorkflowBlockers(ctx, unservedParams)
				if err != nil {
					return err
				}
				if asJSON {
					return report.JSON(env.stdout, report.OrEmpty(list))
				}
				return report.Unserved(env.stdout, list, time.Now())
			}
			if runaways {
				list, err := env.client.RunawayWorkflows(ctx, 0)
				if err != nil {
					return err
				}
				if asJSON {
					return report.JSON(env.stdout, report.OrEmpty(list))
				}
				return report.Runaways(env.stdout, list)
			}
			params := &goclient.StuckExecutionsParams{}
			for _, t := range []struct {
				flag string
				d    *time.Duration
				dst  **time.Duration
			}{{"stuck-in-progress", &inProgress, &params.StuckInProgressAfter}, {"stuck-scheduled", &sched, &params.StuckScheduledAfter}} {
				if !cmd.Flags().Changed(t.flag) {
					continue
				}
				if *t.d < 0 {
					return usagef("--%s takes a duration of 0 or more, not %s", t.flag, *t.d)
				}
				*t.dst = t.d
			}
			stuck, err := env.client.StuckExecutions(ctx, params)
			if err != nil {
				return err
			}
			if asJSON {
				return report.JSON(env.stdout, report.OrEmpty(stuck))
			}
			if err := report.Stuck(env.stdout, stuck); err != nil {
				return err
			}
			list, err := env.client.RunawayWorkflows(ctx, 0)
			if err != nil {
				return err
			}
			if len(list) > 0 {
				fmt.Fprintln(env.stdout)
				if err := report.Runaways(env.stdout, list); err != nil {
					return err
				}
			}
			due, err := env.client.WorkflowBlockers(ctx, unservedParams)
			if err != nil || len(due) == 0 {
				return err
			}
			fmt.Fprintln(env.stdout)
			return report.Unserved(env.stdout, due, time.Now())
		}),
	}
	cmd.Flags().DurationVar(&inProgress, "stuck-in-progress", 0,
		"list executions in progress with no sign of life for this long (default: the housekeeping setting)")
	cmd.Flags().DurationVar(&sched, "stuck-scheduled", 0,
		"list scheduled executions overdue by this long (default: the housekeeping setting)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	cmd.Flags().BoolVar(&runaways, "runaways", false,
		"list the runaway chains only: workflows housekeeping flagged for too many executions")
	cmd.Flags().BoolVar(&unserved, "unserved", false,
		"list only the steps due on a queue no worker serves")
	return cmd
}

func newStatsCmd(opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats [WORKFLOW_TYPE...]",
		Short: "Per type and step over the last day: outcomes, queue lag, run time",
		Long: `Print, per workflow type and step, the executions that ended since the start
of the hour 24 hours ago: how many, their outcomes, and the p50 and p95 of their
queue lag and run time, within 1% (the geneva.step_stats view). Naming types
keeps only those; a type with no workflows is refused.`,
		Args: cobra.ArbitraryArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			return stats(ctx, env, args, asJSON)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func stats(ctx context.Context, env *environment, types []string, asJSON bool) error {
	if len(types) > 0 {
		counts, err := env.client.WorkflowCounts(ctx)
		if err != nil {
			return err
		}
		for _, t := range types {
			if !slices.ContainsFunc(counts, func(c *goclient.WorkflowCount) bool { return c.WorkflowType == t }) {
				return fmt.Errorf("no workflows of type %q", t)
			}
		}
	}
	params := &goclient.StepStatsParams{}
	if len(types) > 0 {
		params.WorkflowTypes = types
	}
	stats, err := env.client.StepStats(ctx, params)
	if err != nil {
		return err
	}
	if asJSON {
		return report.JSON(env.stdout, report.OrEmpty(stats))
	}
	return report.Stats(env.stdout, stats)
}

// newOperateCmd returns the command for an operator function taking a
// workflow id.
func newOperateCmd(opts *options, action, short string) *cobra.Command {
	return &cobra.Command{
		Use:   action + " WORKFLOW_ID",
		Short: short,
		Args:  oneWorkflowID,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			id, err := parseWorkflowID(args[0])
			if err != nil {
				return err
			}
			var workflow *goclient.Workflow
			switch action {
			case "pause":
				workflow, err = env.client.PauseWorkflow(ctx, id)
			case "resume":
				workflow, err = env.client.ResumeWorkflow(ctx, id)
			case "cancel":
				workflow, err = env.client.CancelWorkflow(ctx, id)
			case "skip":
				workflow, err = env.client.SkipStep(ctx, id)
			}
			if err != nil {
				return err
			}
			env.printf("workflow %d is %s", workflow.ID, workflow.State)
			if workflow.RequestedAction != nil {
				env.printf(" (%s requested: it applies when the running step ends)", *workflow.RequestedAction)
			}
			env.printf("\n")
			return nil
		}),
	}
}

func newRunNowCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "run-now WORKFLOW_ID [STEP]",
		Short: "Run a workflow's next step (or STEP) now instead of waiting",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("run-now takes a workflow id and, optionally, a step name")
			}
			return nil
		},
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			id, err := parseWorkflowID(args[0])
			if err != nil {
				return err
			}
			step := ""
			if len(args) == 2 {
				step = args[1]
			}
			workflow, err := env.client.ScheduleStep(ctx, id, step)
			if err != nil {
				return err
			}
			env.printf("workflow %d runs %s now\n", workflow.ID, report.Deref(workflow.NextStepName))
			return nil
		}),
	}
}

func parseWorkflowID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%q is not a workflow id", arg)
	}
	return id, nil
}
