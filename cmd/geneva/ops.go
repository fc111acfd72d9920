package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/goclient"
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
	return &cobra.Command{
		Use:   "migrate",
		Short: "Install or upgrade the schema (River's, then Geneva's) in place",
		Long: `Install or upgrade River's schema, then Geneva's tables and functions, in
place. Safe to run again: it applies only what the database lacks and
reinstalls every function.`,
		Args: noArgs,
		RunE: withEnv(opts, false, func(ctx context.Context, env *environment, args []string) error {
			return env.migrate(ctx)
		}),
	}
}

func newListCmd(opts *options) *cobra.Command {
	var (
		params   goclient.ListWorkflowsParams
		hero     string
		asJSON   bool
		cmdState string
	)
	cmd := &cobra.Command{
		Use:   "ls [flags]",
		Short: "Workflow counts by type and state, then the newest workflows",
		Long: `Print the number of workflows by type and state, then the newest workflows
matching the flags. With --state paused, print why each paused (the
geneva.paused_workflows view) instead.`,
		Example: `  geneva ls
  geneva ls --state paused --type PaymentProcessing
  geneva ls --hero User:42 --json`,
		Args: noArgs,
		RunE: withEnv(opts, false, func(ctx context.Context, env *environment, args []string) error {
			params.State = cmdState
			if hero != "" {
				heroType, heroID, ok := strings.Cut(hero, ":")
				if !ok || heroType == "" || heroID == "" {
					return usagef("--hero takes TYPE:ID, as User:42")
				}
				params.HeroType, params.HeroID = heroType, heroID
			}
			return list(ctx, env, &params, asJSON)
		}),
	}
	cmd.Flags().StringVar(&cmdState, "state", "", "only workflows in this state (ready, performing, paused, finished, canceled)")
	cmd.Flags().StringVar(&params.WorkflowType, "type", "", "only workflows of this type (the counts too)")
	cmd.Flags().StringVar(&hero, "hero", "", "only workflows of this hero, as TYPE:ID")
	cmd.Flags().IntVar(&params.Limit, "limit", 20, "how many workflows to list")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func list(ctx context.Context, env *environment, params *goclient.ListWorkflowsParams, asJSON bool) error {
	counts, err := workflowCounts(ctx, env, params.WorkflowType)
	if err != nil {
		return err
	}
	var (
		paused    []*goclient.PausedWorkflow
		workflows []*goclient.Workflow
	)
	if params.State == goclient.StatePaused && params.HeroType == "" {
		paused, err = env.client.PausedWorkflows(ctx, params.WorkflowType)
	} else {
		workflows, err = env.client.ListWorkflows(ctx, params)
	}
	if err != nil {
		return err
	}

	if asJSON {
		out := map[string]any{"counts": counts}
		if paused != nil || params.State == goclient.StatePaused && params.HeroType == "" {
			out["paused"] = orEmpty(paused)
		} else {
			out["workflows"] = orEmpty(workflows)
		}
		return printJSON(env.stdout, out)
	}
	if err := printCounts(env.stdout, counts); err != nil {
		return err
	}
	env.printf("\n")
	if params.State == goclient.StatePaused && params.HeroType == "" {
		return printPaused(env.stdout, paused)
	}
	printWorkflows(env.stdout, workflows)
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

var workflowStates = []string{goclient.StateReady, goclient.StatePerforming, goclient.StatePaused, goclient.StateFinished, goclient.StateCanceled}

// printCounts prints workflow counts as a table of types by states.
func printCounts(out io.Writer, counts []*goclient.WorkflowCount) error {
	byType := map[string]map[string]int64{}
	var types []string
	for _, count := range counts {
		if byType[count.WorkflowType] == nil {
			byType[count.WorkflowType] = map[string]int64{}
			types = append(types, count.WorkflowType)
		}
		byType[count.WorkflowType][count.State] = count.Workflows
	}
	if len(types) == 0 {
		_, err := fmt.Fprintln(out, "No workflows.")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "workflow type\t%s\t\n", strings.Join(workflowStates, "\t"))
	for _, workflowType := range types {
		fmt.Fprintf(w, "%s", workflowType)
		for _, state := range workflowStates {
			fmt.Fprintf(w, "\t%d", byType[workflowType][state])
		}
		fmt.Fprintf(w, "\t\n")
	}
	return w.Flush()
}

// printPaused prints the paused workflows and why (the
// geneva.paused_workflows view).
func printPaused(out io.Writer, paused []*goclient.PausedWorkflow) error {
	if len(paused) == 0 {
		_, err := fmt.Fprintln(out, "No paused workflows.")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "id\ttype\thero\tnext step\tpaused for\twhy")
	for _, p := range paused {
		why := "paused by an operator or the step"
		switch {
		case p.KeptExecutionID != nil && p.KeptOverdueBy != nil && *p.KeptOverdueBy > 0:
			why = "paused by an operator; its next step is overdue by " + duration(p.KeptOverdueBy)
		case p.KeptExecutionID != nil && p.KeptScheduledFor != nil:
			why = "paused by an operator; its next step is due " + stamp(*p.KeptScheduledFor)
		case p.LastErrorMessage != nil && deref(p.ErrorStepName) == deref(p.NextStepName):
			why = deref(p.LastErrorClass) + ": " + *p.LastErrorMessage
		}
		fmt.Fprintf(w, "%d\t%s\t%s %s\t%s\t%s\t%s\n", p.WorkflowID, p.WorkflowType, p.HeroType, p.HeroID,
			deref(p.NextStepName), duration(p.PausedFor), why)
	}
	return w.Flush()
}

func printWorkflows(out io.Writer, workflows []*goclient.Workflow) {
	if len(workflows) == 0 {
		fmt.Fprintln(out, "No workflows match.")
		return
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "id\ttype\thero\tstate\tnext step\tupdated")
	for _, wf := range workflows {
		next := deref(wf.NextStepName)
		if wf.CurrentStepName != nil {
			next = *wf.CurrentStepName + " (running)"
		}
		if wf.State == goclient.StateFinished || wf.State == goclient.StateCanceled {
			next = ""
		}
		fmt.Fprintf(w, "%d\t%s\t%s %s\t%s\t%s\t%s\n", wf.ID, wf.WorkflowType, wf.HeroType, wf.HeroID,
			wf.State, next, stamp(wf.UpdatedAt))
	}
	w.Flush()
}

func newShowCmd(opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show WORKFLOW_ID",
		Short: "A workflow and the timeline of its step executions",
		Args:  oneWorkflowID,
		RunE: withEnv(opts, false, func(ctx context.Context, env *environment, args []string) error {
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
			if asJSON {
				return printJSON(env.stdout, map[string]any{"workflow": workflow, "timeline": orEmpty(timeline)})
			}
			printWorkflow(env.stdout, workflow, timeline)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// printWorkflow prints a workflow and the timeline of its executions (the
// geneva.workflow_timeline view).
func printWorkflow(out io.Writer, wf *goclient.Workflow, timeline []*goclient.TimelineEntry) {
	fmt.Fprintf(out, "workflow %d: %s for %s %s — %s", wf.ID, wf.WorkflowType, wf.HeroType, wf.HeroID, wf.State)
	if wf.RequestedAction != nil {
		fmt.Fprintf(out, " (%s requested)", *wf.RequestedAction)
	}
	if wf.NextStepName != nil && wf.State != goclient.StateFinished && wf.State != goclient.StateCanceled {
		fmt.Fprintf(out, ", next step %s", *wf.NextStepName)
	}
	fmt.Fprintf(out, "\ncreated %s\n\n", stamp(wf.CreatedAt))

	if len(timeline) == 0 {
		fmt.Fprintln(out, "No step executions.")
		return
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "execution\tstep\tstate\toutcome\tscheduled for\twaited\tran\terror")
	for _, e := range timeline {
		errText := ""
		if e.ErrorMessage != nil {
			errText = deref(e.ErrorClassName) + ": " + *e.ErrorMessage
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ExecutionID, e.StepName, e.State, deref(e.Outcome),
			e.ScheduledFor.Local().Format("2006-01-02 15:04:05.000 MST"), duration(e.QueueLag), duration(e.RunTime), errText)
	}
	w.Flush()
}

func newStuckCmd(opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stuck",
		Short: "Executions housekeeping would recover as stuck",
		Long: `List the executions housekeeping would recover as stuck (the
geneva.stuck_executions view): in progress with no sign of life for an hour,
or scheduled and overdue for 15 minutes.`,
		Args: noArgs,
		RunE: withEnv(opts, false, func(ctx context.Context, env *environment, args []string) error {
			stuck, err := env.client.StuckExecutions(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(env.stdout, orEmpty(stuck))
			}
			if len(stuck) == 0 {
				env.printf("No stuck executions.\n")
				return nil
			}
			w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "execution\tworkflow\ttype\thero\tstep\tstate\tsilent for\toverdue by")
			for _, e := range stuck {
				fmt.Fprintf(w, "%d\t%d\t%s\t%s %s\t%s\t%s\t%s\t%s\n", e.ExecutionID, e.WorkflowID, e.WorkflowType,
					e.HeroType, e.HeroID, e.StepName, e.State, duration(e.SilentFor), duration(e.OverdueBy))
			}
			return w.Flush()
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func newStatsCmd(opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats [WORKFLOW_TYPE...]",
		Short: "Per type and step over the last day: outcomes, queue lag, run time",
		Long: `Print, per workflow type and step, the executions that ended in the last 24
hours: how many, their outcomes, and the p50 and p95 of their queue lag and run
time (the geneva.step_stats view). Naming types keeps only those; a type with
no workflows is refused.`,
		Args: cobra.ArbitraryArgs,
		RunE: withEnv(opts, false, func(ctx context.Context, env *environment, args []string) error {
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
	all, err := env.client.StepStats(ctx)
	if err != nil {
		return err
	}
	stats := slices.DeleteFunc(all, func(s *goclient.StepStat) bool {
		return len(types) > 0 && !slices.Contains(types, s.WorkflowType)
	})
	if asJSON {
		return printJSON(env.stdout, orEmpty(stats))
	}
	if len(stats) == 0 {
		env.printf("No step executions ended in the last 24 hours.\n")
		return nil
	}
	seconds := func(s *float64) string {
		if s == nil {
			return ""
		}
		return (time.Duration(*s * float64(time.Second))).Round(time.Millisecond).String()
	}
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "type\tstep\texecutions\truns\tlag p50\tlag p95\trun p50\trun p95\toutcomes")
	for _, s := range stats {
		var outcomes []string
		for outcome, n := range s.Outcomes {
			outcomes = append(outcomes, fmt.Sprintf("%s=%d", outcome, n))
		}
		slices.Sort(outcomes)
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", s.WorkflowType, s.StepName, s.Executions, s.Runs,
			seconds(s.QueueLagP50Seconds), seconds(s.QueueLagP95Seconds), seconds(s.RunTimeP50Seconds),
			seconds(s.RunTimeP95Seconds), strings.Join(outcomes, " "))
	}
	return w.Flush()
}

// newOperateCmd returns the command for an operator function taking a
// workflow id.
func newOperateCmd(opts *options, action, short string) *cobra.Command {
	return &cobra.Command{
		Use:   action + " WORKFLOW_ID",
		Short: short,
		Args:  oneWorkflowID,
		RunE: withEnv(opts, false, func(ctx context.Context, env *environment, args []string) error {
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
		RunE: withEnv(opts, false, func(ctx context.Context, env *environment, args []string) error {
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
			env.printf("workflow %d runs %s now\n", workflow.ID, deref(workflow.NextStepName))
			return nil
		}),
	}
}

func newHousekeepCmd(opts *options) *cobra.Command {
	var params goclient.HousekeepParams
	cmd := &cobra.Command{
		Use:   "housekeep [flags]",
		Short: "Delete old workflows and recover stuck steps, until done",
		Long: `Run geneva.housekeep in rounds until nothing is left: delete finished and
canceled workflows past their retention, and recover executions stuck in
progress or overdue while scheduled. A flag not given takes the engine's
default; a zero --retention deletes every ended workflow.`,
		Args: noArgs,
		RunE: withEnv(opts, false, func(ctx context.Context, env *environment, args []string) error {
			var total goclient.HousekeepResult
			for {
				result, err := env.client.Housekeep(ctx, &params)
				if err != nil {
					return err
				}
				total.Add(result)
				if !result.More {
					break
				}
			}
			env.printf("deleted %d workflows (%d executions); recovered %d executions stuck in progress and %d stuck scheduled\n",
				total.WorkflowsCleanedUp, total.StepExecutionsCleanedUp, total.StuckInProgressRecovered, total.StuckScheduledRecovered)
			return nil
		}),
	}
	cmd.Flags().DurationVar(&params.Retention, "retention", 30*24*time.Hour, "delete finished and canceled workflows that ended this long ago (negative: never)")
	cmd.Flags().DurationVar(&params.StuckInProgressAfter, "stuck-in-progress", time.Hour, "recover executions in progress this long")
	cmd.Flags().DurationVar(&params.StuckScheduledAfter, "stuck-scheduled", 15*time.Minute, "recover scheduled executions overdue this long")
	cmd.Flags().StringVar(&params.RecoveryAction, "recovery", "reattempt", "what to do with stuck executions: reattempt or cancel")
	return cmd
}

func parseWorkflowID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%q is not a workflow id", arg)
	}
	return id, nil
}

// stamp formats a timestamp for people, in the local time zone, naming it.
func stamp(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

func duration(d *time.Duration) string {
	if d == nil {
		return ""
	}
	return d.Round(time.Millisecond).String()
}

func deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}

// orEmpty makes a nil slice an empty one, so JSON prints [] and not null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// printJSON writes v as indented JSON. Structs from goclient are written
// with their SQL column names (their db tags), durations as seconds and
// times in RFC 3339, so scripts read the same names as the views.
func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonValue(reflect.ValueOf(v)))
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	timeType     = reflect.TypeFor[time.Time]()
	rawType      = reflect.TypeFor[json.RawMessage]()
)

func jsonValue(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	switch {
	case v.Type() == durationType:
		return time.Duration(v.Int()).Seconds()
	case v.Type() == timeType, v.Type() == rawType:
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return jsonValue(v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsonValue(v.Index(i))
		}
		return out
	case reflect.Map:
		out := map[string]any{}
		for _, key := range v.MapKeys() {
			out[fmt.Sprint(key.Interface())] = jsonValue(v.MapIndex(key))
		}
		return out
	case reflect.Struct:
		out := map[string]any{}
		for i := range v.NumField() {
			field := v.Type().Field(i)
			if !field.IsExported() {
				continue
			}
			name := field.Tag.Get("db")
			if name == "" || name == "-" {
				name = field.Name
			}
			out[name] = jsonValue(v.Field(i))
		}
		return out
	}
	return v.Interface()
}
