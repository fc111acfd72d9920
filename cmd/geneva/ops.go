package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/goclient"
)

func runSQL(ctx context.Context, env *environment, args []string) error {
	script, err := geneva.PsqlScript()
	if err != nil {
		return err
	}
	_, err = io.WriteString(env.stdout, script)
	return err
}

func runMigrate(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return errors.New("migrate takes no arguments")
	}
	return env.migrate(ctx)
}

func runList(ctx context.Context, env *environment, args []string) error {
	flags := flag.NewFlagSet("ls", flag.ContinueOnError)
	state := flags.String("state", "", "only workflows in this state")
	workflowType := flags.String("type", "", "only workflows of this type")
	hero := flags.String("hero", "", "only workflows of this hero, as TYPE:ID")
	limit := flags.Int("limit", 20, "how many workflows to list")
	if err := flags.Parse(args); err != nil {
		return err
	}
	params := &goclient.ListWorkflowsParams{State: *state, WorkflowType: *workflowType, Limit: *limit}
	if *hero != "" {
		heroType, heroID, ok := strings.Cut(*hero, ":")
		if !ok {
			return errors.New("--hero takes TYPE:ID")
		}
		params.HeroType, params.HeroID = heroType, heroID
	}

	if err := printCounts(ctx, env); err != nil {
		return err
	}
	if params.State == goclient.StatePaused && params.HeroType == "" {
		return printPaused(ctx, env, params.WorkflowType)
	}
	workflows, err := env.client.ListWorkflows(ctx, params)
	if err != nil {
		return err
	}
	env.printf("\n")
	printWorkflows(env.stdout, workflows)
	return nil
}

// printCounts prints the geneva.workflow_counts view as a table of types by
// states.
func printCounts(ctx context.Context, env *environment) error {
	counts, err := env.client.WorkflowCounts(ctx)
	if err != nil {
		return err
	}
	states := []string{goclient.StateReady, goclient.StatePerforming, goclient.StatePaused, goclient.StateFinished, goclient.StateCanceled}
	byType := map[string]map[string]int64{}
	var types []string
	for _, count := range counts {
		if byType[count.WorkflowType] == nil {
			byType[count.WorkflowType] = map[string]int64{}
			types = append(types, count.WorkflowType)
		}
		byType[count.WorkflowType][count.State] = count.Workflows
	}
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "workflow type\t%s\t\n", strings.Join(states, "\t"))
	for _, workflowType := range types {
		fmt.Fprintf(w, "%s", workflowType)
		for _, state := range states {
			fmt.Fprintf(w, "\t%d", byType[workflowType][state])
		}
		fmt.Fprintf(w, "\t\n")
	}
	if len(types) == 0 {
		fmt.Fprintf(w, "(no workflows)\t\n")
	}
	return w.Flush()
}

// printPaused prints the paused workflows and why (the
// geneva.paused_workflows view).
func printPaused(ctx context.Context, env *environment, workflowType string) error {
	paused, err := env.client.PausedWorkflows(ctx, workflowType)
	if err != nil {
		return err
	}
	env.printf("\n")
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "id\ttype\thero\tnext step\tpaused for\twhy")
	for _, p := range paused {
		why := "paused by an operator or the step"
		switch {
		case p.KeptExecutionID != nil:
			why = "paused by an operator; its next step is overdue by " + duration(p.KeptOverdueBy)
		case p.LastErrorMessage != nil && deref(p.ErrorStepName) == deref(p.NextStepName):
			why = deref(p.LastErrorClass) + ": " + *p.LastErrorMessage
		}
		fmt.Fprintf(w, "%d\t%s\t%s %s\t%s\t%s\t%s\n", p.WorkflowID, p.WorkflowType, p.HeroType, p.HeroID,
			deref(p.NextStepName), duration(p.PausedFor), why)
	}
	return w.Flush()
}

func printWorkflows(out io.Writer, workflows []*goclient.Workflow) {
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "id\ttype\thero\tstate\tnext step\tupdated")
	for _, wf := range workflows {
		next := deref(wf.NextStepName)
		if wf.CurrentStepName != nil {
			next = *wf.CurrentStepName + " (running)"
		}
		fmt.Fprintf(w, "%d\t%s\t%s %s\t%s\t%s\t%s\n", wf.ID, wf.WorkflowType, wf.HeroType, wf.HeroID,
			wf.State, next, wf.UpdatedAt.Format(time.DateTime))
	}
	w.Flush()
}

func runShow(ctx context.Context, env *environment, args []string) error {
	id, err := workflowID(args, 1)
	if err != nil {
		return err
	}
	workflow, err := env.client.GetWorkflow(ctx, id)
	if err != nil {
		return describe(err)
	}
	timeline, err := env.client.Timeline(ctx, id)
	if err != nil {
		return err
	}
	printWorkflow(env.stdout, workflow, timeline)
	return nil
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
	fmt.Fprintf(out, "\ncreated %s\n\n", wf.CreatedAt.Format(time.DateTime))

	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "execution\tstep\tstate\toutcome\tscheduled for\twaited\tran\terror")
	for _, e := range timeline {
		errText := ""
		if e.ErrorMessage != nil {
			errText = deref(e.ErrorClassName) + ": " + *e.ErrorMessage
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ExecutionID, e.StepName, e.State, deref(e.Outcome),
			e.ScheduledFor.Format("2006-01-02 15:04:05.000"), duration(e.QueueLag), duration(e.RunTime), errText)
	}
	w.Flush()
}

func duration(d *time.Duration) string {
	if d == nil {
		return ""
	}
	return d.Round(time.Millisecond).String()
}

func runStuck(ctx context.Context, env *environment, args []string) error {
	stuck, err := env.client.StuckExecutions(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "execution\tworkflow\ttype\thero\tstep\tstate\tsilent for\toverdue by")
	for _, e := range stuck {
		fmt.Fprintf(w, "%d\t%d\t%s\t%s %s\t%s\t%s\t%s\t%s\n", e.ExecutionID, e.WorkflowID, e.WorkflowType,
			e.HeroType, e.HeroID, e.StepName, e.State, duration(e.SilentFor), duration(e.OverdueBy))
	}
	return w.Flush()
}

func runStats(ctx context.Context, env *environment, args []string) error {
	stats, err := env.client.StepStats(ctx)
	if err != nil {
		return err
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
		if len(args) > 0 && !slices.Contains(args, s.WorkflowType) {
			continue
		}
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

// operate returns the command for an operator function.
func operate(action string) func(ctx context.Context, env *environment, args []string) error {
	return func(ctx context.Context, env *environment, args []string) error {
		id, err := workflowID(args, 1)
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
			return describe(err)
		}
		env.printf("workflow %d is %s", workflow.ID, workflow.State)
		if workflow.RequestedAction != nil {
			env.printf(" (%s requested: it applies when the running step ends)", *workflow.RequestedAction)
		}
		env.printf("\n")
		return nil
	}
}

func runNow(ctx context.Context, env *environment, args []string) error {
	id, err := workflowID(args, 2)
	if err != nil {
		return err
	}
	step := ""
	if len(args) == 2 {
		step = args[1]
	}
	workflow, err := env.client.ScheduleStep(ctx, id, step)
	if err != nil {
		return describe(err)
	}
	env.printf("workflow %d runs %s now\n", workflow.ID, deref(workflow.NextStepName))
	return nil
}

func runHousekeep(ctx context.Context, env *environment, args []string) error {
	flags := flag.NewFlagSet("housekeep", flag.ContinueOnError)
	params := &goclient.HousekeepParams{}
	flags.DurationVar(&params.Retention, "retention", 30*24*time.Hour, "delete finished and canceled workflows that ended this long ago (negative: never)")
	flags.DurationVar(&params.StuckInProgressAfter, "stuck-in-progress", time.Hour, "recover executions in progress this long")
	flags.DurationVar(&params.StuckScheduledAfter, "stuck-scheduled", 15*time.Minute, "recover scheduled executions overdue this long")
	flags.StringVar(&params.RecoveryAction, "recovery", "reattempt", "what to do with stuck executions: reattempt or cancel")
	if err := flags.Parse(args); err != nil {
		return err
	}
	var total goclient.HousekeepResult
	for {
		result, err := env.client.Housekeep(ctx, params)
		if err != nil {
			return describe(err)
		}
		total.Add(result)
		if !result.More {
			break
		}
	}
	env.printf("deleted %d workflows (%d executions); recovered %d executions stuck in progress and %d stuck scheduled\n",
		total.WorkflowsCleanedUp, total.StepExecutionsCleanedUp, total.StuckInProgressRecovered, total.StuckScheduledRecovered)
	return nil
}

func workflowID(args []string, max int) (int64, error) {
	if len(args) == 0 || len(args) > max {
		return 0, errors.New("give a workflow id")
	}
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a workflow id", args[0])
	}
	return id, nil
}

// describe adds the database's detail and hint to an error, for people.
func describe(err error) error {
	var geneva *goclient.Error
	if errors.As(err, &geneva) {
		text := geneva.PgError.Message
		if geneva.PgError.Detail != "" {
			text += " (" + geneva.PgError.Detail + ")"
		}
		if geneva.PgError.Hint != "" {
			text += "; " + geneva.PgError.Hint
		}
		return errors.New(text)
	}
	return err
}

func deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}
