// Package report prints Geneva's views for people and scripts: the tables
// the geneva command and the demo print, and JSON with the views' column
// names.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

var workflowStates = []goclient.WorkflowState{goclient.StateReady, goclient.StatePerforming, goclient.StatePaused, goclient.StateFinished, goclient.StateCanceled}

// Counts prints workflow counts as a table of types by states.
func Counts(out io.Writer, counts []*goclient.WorkflowCount) error {
	byType := map[string]map[goclient.WorkflowState]int64{}
	var types []string
	for _, count := range counts {
		if byType[count.WorkflowType] == nil {
			byType[count.WorkflowType] = map[goclient.WorkflowState]int64{}
			types = append(types, count.WorkflowType)
		}
		byType[count.WorkflowType][count.State] = count.Workflows
	}
	if len(types) == 0 {
		_, err := fmt.Fprintln(out, "No workflows.")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "workflow type")
	for _, state := range workflowStates {
		fmt.Fprintf(w, "\t%s", state)
	}
	fmt.Fprintf(w, "\t\n")
	for _, workflowType := range types {
		fmt.Fprintf(w, "%s", workflowType)
		for _, state := range workflowStates {
			fmt.Fprintf(w, "\t%d", byType[workflowType][state])
		}
		fmt.Fprintf(w, "\t\n")
	}
	return w.Flush()
}

// Paused prints the paused workflows and why (the
// geneva.paused_workflows view).
func Paused(out io.Writer, paused []*goclient.PausedWorkflow) error {
	if len(paused) == 0 {
		_, err := fmt.Fprintln(out, "No paused workflows.")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	cells := WithCells(paused, func(p *goclient.PausedWorkflow) string { return p.Cell })
	fmt.Fprintln(w, "id\ttype\thero\tnext step\tpaused for\twhy"+CellColumn(cells, "cell"))
	for _, p := range paused {
		why := "paused by an operator or the step"
		switch {
		case p.KeptExecutionID != nil && p.KeptOverdueBy != nil && *p.KeptOverdueBy > 0:
			why = "paused by an operator; its next step is overdue by " + Duration(p.KeptOverdueBy)
		case p.KeptExecutionID != nil && p.KeptScheduledFor != nil:
			why = "paused by an operator; its next step is due " + Stamp(*p.KeptScheduledFor)
		case p.LastErrorMessage != nil && Deref(p.ErrorStepName) == Deref(p.NextStepName):
			why = Deref(p.LastErrorClass) + ": " + *p.LastErrorMessage
		}
		fmt.Fprintf(w, "%d\t%s\t%s %s\t%s\t%s\t%s%s\n", p.WorkflowID, p.WorkflowType, p.HeroType, p.HeroID,
			Deref(p.NextStepName), Duration(p.PausedFor), why, CellColumn(cells, p.Cell))
	}
	return w.Flush()
}

func Workflows(out io.Writer, workflows []*goclient.Workflow) {
	if len(workflows) == 0 {
		fmt.Fprintln(out, "No workflows match.")
		return
	}
	// a group column when a workflow has a group (create_workflow's p_group)
	grouped := slices.ContainsFunc(workflows, func(wf *goclient.Workflow) bool { return wf.Group != nil })
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	if grouped {
		fmt.Fprintln(w, "id\ttype\thero\tgroup\tstate\tnext step\tupdated")
	} else {
		fmt.Fprintln(w, "id\ttype\thero\tstate\tnext step\tupdated")
	}
	for _, wf := range workflows {
		next := Deref(wf.NextStepName)
		if wf.CurrentStepName != nil {
			next = *wf.CurrentStepName + " (running)"
		}
		if wf.State == goclient.StateFinished || wf.State == goclient.StateCanceled {
			next = ""
		}
		hero := wf.HeroType + " " + wf.HeroID
		if grouped {
			hero += "\t" + Deref(wf.Group)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", wf.ID, wf.WorkflowType, hero, wf.State, next, Stamp(wf.UpdatedAt))
	}
	w.Flush()
}

// Workflow prints a workflow, why its step has not started (a line per row
// of geneva.workflow_blockers) and the timeline of its executions (the
// geneva.workflow_timeline view).
func Workflow(out io.Writer, wf *goclient.Workflow, blockers []*goclient.WorkflowBlocker, timeline []*goclient.TimelineEntry) {
	fmt.Fprintf(out, "workflow %d: %s for %s %s", wf.ID, wf.WorkflowType, wf.HeroType, wf.HeroID)
	if wf.Group != nil {
		fmt.Fprintf(out, " of group %s", *wf.Group)
	}
	fmt.Fprintf(out, " — %s", wf.State)
	if wf.RequestedAction != nil {
		fmt.Fprintf(out, " (%s requested)", *wf.RequestedAction)
	}
	if wf.NextStepName != nil && wf.State != goclient.StateFinished && wf.State != goclient.StateCanceled {
		fmt.Fprintf(out, ", next step %s", *wf.NextStepName)
	}
	fmt.Fprintf(out, "\ncreated %s%s\n", Stamp(wf.CreatedAt), Versions(wf))
	if wf.FinalStepAt != nil {
		// geneva.final_step_at: exact with offsets, a lower bound with waits
		fmt.Fprintf(out, "earliest start of the final step: %s\n", at(wf.FinalStepAt, time.Now()))
	}
	Blockers(out, blockers, time.Now())
	fmt.Fprintln(out)

	if len(timeline) == 0 {
		fmt.Fprintln(out, "No step executions.")
		return
	}
	// resumable steps: the cursor each execution got to, and the one it
	// continues, so a chain of executions reads as one step's progress
	resumable := slices.ContainsFunc(timeline, func(e *goclient.TimelineEntry) bool {
		return e.Cursor != nil || e.ContinuesFromID != nil
	})
	// steps that awaited an event: the event each received
	received := slices.ContainsFunc(timeline, func(e *goclient.TimelineEntry) bool { return e.EventName != nil })
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	header := "execution\tstep\tstate\toutcome\tscheduled for\twaited\tran"
	if resumable {
		header += "\tcontinues\tcursor"
	}
	if received {
		header += "\tevent received"
	}
	fmt.Fprintln(w, header+"\terror")
	for _, e := range timeline {
		errText := ""
		if e.ErrorMessage != nil {
			errText = Deref(e.ErrorClassName) + ": " + *e.ErrorMessage
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s", e.ExecutionID, e.StepName, e.State, Deref(e.Outcome),
			e.ScheduledFor.Local().Format("2006-01-02 15:04:05.000 MST"), Duration(e.QueueLag), Duration(e.RunTime))
		if resumable {
			continues := ""
			if e.ContinuesFromID != nil {
				continues = fmt.Sprintf("<- %d", *e.ContinuesFromID)
			}
			fmt.Fprintf(w, "\t%s\t%s", continues, shorten(string(e.Cursor), 40))
		}
		if received {
			fmt.Fprintf(w, "\t%s", Received(e))
		}
		fmt.Fprintf(w, "\t%s\n", errText)
	}
	w.Flush()

	// HTTP steps: where each was sent (a failed reply's status is its error
	// class, http.status.NNN)
	var urls []string
	for _, e := range timeline {
		if e.HTTPURL != nil {
			line := fmt.Sprintf("  %s: POST %s", e.StepName, *e.HTTPURL)
			if !slices.Contains(urls, line) {
				urls = append(urls, line)
			}
		}
	}
	if len(urls) > 0 {
		fmt.Fprintf(out, "\nHTTP steps:\n%s\n", strings.Join(urls, "\n"))
	}
}

// Received says which event an execution received, from whom, and its
// payload's first characters: `approved from app_role: {"by": "mia"}`; ""
// when it received none.
func Received(e *goclient.TimelineEntry) string {
	if e.EventName == nil {
		return ""
	}
	text := *e.EventName + " from " + Deref(e.EventSentBy)
	if p := strings.TrimSpace(string(e.EventPayload)); p != "" && p != "null" {
		text += ": " + shorten(p, 40)
	}
	return text
}

// Versions says which version of its type's definition a workflow follows,
// and the one it started under when they differ: ", definition version 3
// (started under 1)"; nothing for a row without (imported by hand).
func Versions(wf *goclient.Workflow) string {
	if wf.DefinitionVersion == nil {
		return ""
	}
	text := fmt.Sprintf(", definition version %d", *wf.DefinitionVersion)
	if wf.StartedVersion != nil && *wf.StartedVersion != *wf.DefinitionVersion {
		text += fmt.Sprintf(" (started under %d)", *wf.StartedVersion)
	}
	return text
}

// Lineage prints where a workflow came from (retried_from) and its retries,
// when it has either.
func Lineage(out io.Writer, wf *goclient.Workflow, retries []int64) {
	if wf.RetriedFrom != nil {
		fmt.Fprintf(out, "\nretries workflow %d\n", *wf.RetriedFrom)
	}
	if len(retries) > 0 {
		ids := make([]string, len(retries))
		for i, id := range retries {
			ids[i] = strconv.FormatInt(id, 10)
		}
		fmt.Fprintf(out, "\nretried as workflow %s\n", strings.Join(ids, ", "))
	}
}

// Family prints a workflow's parent and root, and its children's counts
// by state (the geneva.workflow_children view).
func Family(out io.Writer, wf *goclient.Workflow, children []goclient.ChildCount) {
	if wf.ParentID != nil {
		fmt.Fprintf(out, "\nchild of workflow %d", *wf.ParentID)
		if wf.RootID != nil && *wf.RootID != *wf.ParentID {
			fmt.Fprintf(out, " (root %d)", *wf.RootID)
		}
		fmt.Fprintln(out)
	}
	if wf.Children == 0 {
		return
	}
	parts := make([]string, len(children))
	for i, c := range children {
		parts[i] = fmt.Sprintf("%d %s", c.Workflows, c.State)
	}
	fmt.Fprintf(out, "\nchildren: %d, %d ended (%s)\n", wf.Children, wf.ChildrenEnded, strings.Join(parts, ", "))
}

// Actions prints the operators' actions on a workflow (the
// geneva.action_log view), newest first.
func Actions(out io.Writer, actions []*goclient.Action) {
	if len(actions) == 0 {
		return
	}
	fmt.Fprintln(out, "\nOperators' actions:")
	ActionLog(out, actions, false)
}

// ActionLog prints operators' actions (the geneva.action_log view) as a
// table, with the workflow each acted on when withWorkflow.
func ActionLog(out io.Writer, actions []*goclient.Action, withWorkflow bool) {
	if len(actions) == 0 {
		fmt.Fprintln(out, "No actions.")
		return
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	header := "action\tat\tby\tverb"
	if withWorkflow {
		header += "\tworkflow"
	}
	cells := WithCells(actions, func(a *goclient.Action) string { return a.Cell })
	fmt.Fprintln(w, header+"\targuments\tresult"+CellColumn(cells, "cell"))
	for _, a := range actions {
		by := a.PerformedBy
		if a.Actor != nil {
			by += " (" + *a.Actor + ")"
		}
		verb := a.Verb
		if a.BulkActionID != nil && a.Verb != "bulk_workflows" {
			verb += fmt.Sprintf(" (bulk %d)", *a.BulkActionID)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s", a.ActionID, Stamp(a.At), by, verb)
		if withWorkflow {
			workflow := ""
			if a.WorkflowID != nil {
				workflow = strconv.FormatInt(*a.WorkflowID, 10)
			}
			fmt.Fprintf(w, "\t%s", workflow)
		}
		fmt.Fprintf(w, "\t%s\t%s%s\n", shorten(string(a.Arguments), 60), shorten(string(a.Result), 60), CellColumn(cells, a.Cell))
	}
	w.Flush()
}

// Count is n and the noun for n of them: "1 step", "2 steps", "0 steps".
func Count[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Stamp formats a timestamp for people, in the local time zone, naming it.
func Stamp(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

func Duration(d *time.Duration) string {
	if d == nil {
		return ""
	}
	return d.Round(time.Millisecond).String()
}

// Deref is *p, or the zero value when p is nil.
func Deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}

// OrEmpty makes a nil slice an empty one, so JSON prints [] and not null.
func OrEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// JSON writes v as indented JSON. Structs from goclient are written
// with their SQL column names (their db tags), durations as seconds and
// times in RFC 3339, so scripts read the same names as the views.
func JSON(out io.Writer, v any) error {
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
			if field.Anonymous && field.Type.Kind() == reflect.Struct {
				// an embedded struct's columns are the row's own (as pgx
				// reads them: goclient.ListedWorkflow's Workflow)
				maps.Copy(out, jsonValue(v.Field(i)).(map[string]any))
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

// Stuck prints the executions housekeeping would recover as stuck (the
// geneva.stuck_executions view).
func Stuck(out io.Writer, stuck []*goclient.StuckExecution) error {
	if len(stuck) == 0 {
		_, err := fmt.Fprintln(out, "No stuck executions.")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	cells := WithCells(stuck, func(e *goclient.StuckExecution) string { return e.Cell })
	fmt.Fprintln(w, "execution\tworkflow\ttype\thero\tstep\tstate\tsilent for\toverdue by"+CellColumn(cells, "cell"))
	for _, e := range stuck {
		fmt.Fprintf(w, "%d\t%d\t%s\t%s %s\t%s\t%s\t%s\t%s%s\n", e.ExecutionID, e.WorkflowID, e.WorkflowType,
			e.HeroType, e.HeroID, e.StepName, e.State, Duration(e.SilentFor), Duration(e.OverdueBy), CellColumn(cells, e.Cell))
	}
	return w.Flush()
}

// Runaways prints the workflows housekeeping flagged as runaway chains (the
// geneva.runaway_workflows view).
func Runaways(out io.Writer, list []*goclient.RunawayWorkflow) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(out, "No runaway workflows.")
		return err
	}
	fmt.Fprintln(out, "Runaway workflows (flagged by housekeeping, not stopped):")
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	cells := WithCells(list, func(r *goclient.RunawayWorkflow) string { return r.Cell })
	fmt.Fprintln(w, "workflow\ttype\thero\tstate\texecutions\tmost repeated step\trepeats\tflagged"+CellColumn(cells, "cell"))
	for _, r := range list {
		fmt.Fprintf(w, "%d\t%s\t%s %s\t%s\t%d\t%s\t%d\t%s%s\n", r.WorkflowID, r.WorkflowType, r.HeroType, r.HeroID,
			r.State, r.Executions, r.StepName, r.Repeats, Stamp(r.FlaggedAt), CellColumn(cells, r.Cell))
	}
	return w.Flush()
}

// Unserved prints the scheduled executions due on a queue no worker serves
// (geneva.workflow_blockers, reason queue), a line each with why.
func Unserved(out io.Writer, list []*goclient.WorkflowBlocker, now time.Time) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(out, "No steps due on a queue no worker serves.")
		return err
	}
	fmt.Fprintln(out, "Due on a queue no worker serves:")
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "execution\tworkflow\ttype\thero\tstep\tqueue\tscheduled for\twhy")
	for _, b := range list {
		fmt.Fprintf(w, "%d\t%d\t%s\t%s %s\t%s\t%s\t%s\t%s\n", b.ExecutionID, b.WorkflowID, b.WorkflowType, b.HeroType, b.HeroID,
			b.StepName, Deref(b.Queue), Stamp(b.ScheduledFor), Blocker(b, now))
	}
	return w.Flush()
}

// Stats prints per type and step statistics (the geneva.step_stats view).
func Stats(out io.Writer, stats []*goclient.StepStat) error {
	if len(stats) == 0 {
		_, err := fmt.Fprintln(out, "No step executions ended in the last 24 hours.")
		return err
	}
	seconds := func(s *float64) string {
		if s == nil {
			return ""
		}
		return (time.Duration(*s * float64(time.Second))).Round(time.Millisecond).String()
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	cells := WithCells(stats, func(s *goclient.StepStat) string { return s.Cell })
	fmt.Fprintln(w, "type\tstep\texecutions\truns\tlag p50\tlag p95\trun p50\trun p95\toutcomes"+CellColumn(cells, "cell"))
	for _, s := range stats {
		var outcomes []string
		for outcome, n := range s.Outcomes {
			outcomes = append(outcomes, fmt.Sprintf("%s=%d", outcome, n))
		}
		slices.Sort(outcomes)
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s%s\n", s.WorkflowType, s.StepName, s.Executions, s.Runs,
			seconds(s.QueueLagP50Seconds), seconds(s.QueueLagP95Seconds), seconds(s.RunTimeP50Seconds),
			seconds(s.RunTimeP95Seconds), strings.Join(outcomes, " "), CellColumn(cells, s.Cell))
	}
	return w.Flush()
}

// WithCells says whether rows were read through a cells' router
// (docs/cells.md): one of them has a cell. A table of them then ends with a
// cell column (CellColumn).
func WithCells[T any](rows []T, cell func(T) string) bool {
	return slices.ContainsFunc(rows, func(r T) bool { return cell(r) != "" })
}

// CellColumn is a table's last column, a tab and value, in a table WithCells
// found cells in; else nothing.
func CellColumn(cells bool, value string) string {
	if !cells {
		return ""
	}
	return "\t" + value
}
