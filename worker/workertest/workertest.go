// Package workertest helps test workflows: it runs their steps inline, in the
// test's goroutine, through the real SQL functions, and asserts on what the
// database then holds.
//
//	func TestOnboarding(t *testing.T) {
//		conn := ... // a connection to a database with Geneva's schema
//		h := workertest.New(t, conn, &worker.Config{Workflows: []*worker.Workflow{onboarding}})
//
//		id := h.Create(ctx, "UserOnboarding", "User", "42")
//		h.Speedrun(ctx, id, nil)
//
//		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
//		h.AssertStepExecuted(ctx, id, "send_reminder", goclient.ExecutionCompleted)
//	}
//
// The harness owns its connection's engine clock (the setting
// geneva.fake_now): to run a step that is not yet due it moves the clock to
// the step's time, so waits are honoured without sleeping and the history
// reads as it would in production, only sooner. Once it has set that clock,
// resumable steps measure their MaxRuntime with it too (worker.Config.Clock):
// it stands still while a step runs, so a budget is spent only when the test
// moves it, e.g. from inside the step:
//
//	worker.Iterate(ctx, it, items, func(ctx context.Context, item Item) error {
//		h.Advance(ctx, time.Hour) // MaxRuntime is spent: the next Set hands over
//		return nil
//	})
//
// The database must honour that setting: its owner runs
// `select geneva.allow_fake_clock(true)` once (test databases only).
// Elsewhere geneva.now() ignores it, and the harness fails the test the
// first time it moves the clock, naming that command.
package workertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// TB is the part of testing.TB the harness uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Harness runs one test's workflows on one connection.
type Harness struct {
	client *goclient.Client
	conn   *pgx.Conn
	runner *worker.Runner
	tb     TB

	mu   sync.Mutex
	fake time.Time // the engine clock the harness set; zero for the real one

	clockChecked bool // the database honours geneva.fake_now (see checkClock)
}

// New registers the workflows of config on conn (a connection to a database
// with Geneva's schema, used only by the harness) and returns a harness.
func New(tb TB, conn *pgx.Conn, config *worker.Config) *Harness {
	tb.Helper()
	h := &Harness{client: goclient.New(conn), conn: conn, tb: tb}
	copied := worker.Config{}
	if config != nil {
		copied = *config
	}
	if copied.Clock == nil {
		copied.Clock = h.clock
	}
	runner, err := worker.NewRunner(&copied)
	if err != nil {
		tb.Fatalf("workertest: %v", err)
	}
	if err := runner.Register(context.Background(), conn); err != nil {
		tb.Fatalf("workertest: %v", err)
	}
	h.runner = runner
	return h
}

// clock is the clock resumable steps measure their budgets with: the engine
// clock the harness set, else the real one.
func (h *Harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fake.IsZero() {
		return time.Now()
	}
	return h.fake
}

// Client returns a client on the harness's connection (and clock).
func (h *Harness) Client() *goclient.Client { return h.client }

// Conn returns the harness's connection, with its clock (geneva.fake_now).
func (h *Harness) Conn() *pgx.Conn { return h.conn }

// Create creates a workflow and returns its id.
func (h *Harness) Create(ctx context.Context, workflowType, heroType, heroID string) int64 {
	h.tb.Helper()
	id, err := h.client.CreateWorkflow(ctx, workflowType, heroType, heroID, nil)
	if err != nil {
		h.tb.Fatalf("workertest: creating %s for %s %s: %v", workflowType, heroType, heroID, err)
	}
	return id
}

// Now returns the engine's clock on the harness's connection.
func (h *Harness) Now(ctx context.Context) time.Time {
	h.tb.Helper()
	var now time.Time
	if err := h.conn.QueryRow(ctx, "select geneva.now()").Scan(&now); err != nil {
		h.tb.Fatalf("workertest: reading the clock: %v", err)
	}
	return now
}

// SetNow moves the engine's clock on the harness's connection. It fails the
// test when the database ignores the setting geneva.fake_now (its owner never
// ran `select geneva.allow_fake_clock(true)`).
func (h *Harness) SetNow(ctx context.Context, at time.Time) {
	h.tb.Helper()
	h.checkClock(ctx)
	if _, err := h.conn.Exec(ctx, "select set_config('geneva.fake_now', $1, false)", at.Format(time.RFC3339Nano)); err != nil {
		h.tb.Fatalf("workertest: setting the clock: %v", err)
	}
	h.mu.Lock()
	h.fake = at
	h.mu.Unlock()
}

// clockProbe is the instant checkClock sets the clock to.
const clockProbe = "2000-01-01T00:00:00Z"

// checkClock fails the test, the first time the harness moves the clock,
// unless geneva.now() honours geneva.fake_now: else a step that is not due
// would never be, and Speedrun would fail only after its MaxSteps.
func (h *Harness) checkClock(ctx context.Context) {
	h.tb.Helper()
	h.mu.Lock()
	checked := h.clockChecked
	h.mu.Unlock()
	if checked {
		return
	}
	if _, err := h.conn.Exec(ctx, "select set_config('geneva.fake_now', $1, false)", clockProbe); err != nil {
		h.tb.Fatalf("workertest: setting the clock: %v", err)
	}
	var (
		honoured bool
		now      time.Time
	)
	if err := h.conn.QueryRow(ctx, "select geneva.now() = $1::timestamptz, geneva.now()", clockProbe).Scan(&honoured, &now); err != nil {
		h.tb.Fatalf("workertest: reading the clock: %v", err)
	}
	if !honoured {
		h.tb.Fatalf("workertest: the harness cannot move the engine's clock: geneva.now() ignores geneva.fake_now "+
			"on this database (set to %s, it returned %s), because the test clock is not allowed here. "+
			"Connected as the schema's owner, run `select geneva.allow_fake_clock(true)` once on the database "+
			"(test databases only; never in production)", clockProbe, now.UTC().Format(time.RFC3339Nano))
	}
	h.mu.Lock()
	h.clockChecked = true
	h.mu.Unlock()
}

// Advance moves the engine's clock on by d.
func (h *Harness) Advance(ctx context.Context, d time.Duration) {
	h.tb.Helper()
	h.SetNow(ctx, h.Now(ctx).Add(d))
}

// PerformNextStep runs the workflow's active execution once, moving the clock
// to its time first if it is not due, and returns it as it ended; nil when the
// workflow has no active execution. The time of a step that awaits an event
// that has not come is its timeout.
func (h *Harness) PerformNextStep(ctx context.Context, workflowID int64) *goclient.StepExecution {
	h.tb.Helper()
	execution := h.activeExecution(ctx, workflowID)
	if execution == nil {
		return nil
	}
	if now := h.Now(ctx); execution.ScheduledFor.After(now) {
		h.SetNow(ctx, execution.ScheduledFor)
	}
	if err := h.runner.Perform(ctx, h.conn, execution.ID); err != nil {
		h.tb.Fatalf("workertest: performing execution %d (%s): %v", execution.ID, execution.StepName, err)
	}
	return h.execution(ctx, execution.ID)
}

// SpeedrunOpts are options for Speedrun.
type SpeedrunOpts struct {
	// MaxSteps stops a run that takes more steps than this, failing the test
	// (a step that reattempts forever).
	//
	// Defaults to 100.
	MaxSteps int
}

// Speedrun runs the workflow's steps one after another, ignoring their waits
// (it moves the clock to each step's time), until the workflow is finished,
// canceled or paused, and returns it. A step that awaits an event that has
// not come is due at its timeout: Speedrun moves the clock there, and the
// step's Await.OnTimeout applies (send the event first, SendEvent, for the
// other path).
func (h *Harness) Speedrun(ctx context.Context, workflowID int64, opts *SpeedrunOpts) *goclient.Workflow {
	h.tb.Helper()
	maxSteps := 100
	if opts != nil && opts.MaxSteps > 0 {
		maxSteps = opts.MaxSteps
	}
	for steps := 0; ; steps++ {
		workflow := h.workflow(ctx, workflowID)
		if workflow.State != goclient.StateReady {
			return workflow
		}
		if steps == maxSteps {
			h.tb.Fatalf("workertest: workflow %d still runs after %d steps", workflowID, maxSteps)
		}
		if h.PerformNextStep(ctx, workflowID) == nil {
			return workflow
		}
	}
}

// SendEvent sends the event to the workflow (geneva.send_event, on the
// harness's connection and clock), payload encoded as JSON (nil for none: SQL
// NULL; a json.RawMessage as it is). It returns false when the workflow has
// ended (nothing was recorded), and fails the test on an error (an unknown
// workflow, a bad name or payload). The step awaiting the event, if any, is
// then due now: PerformNextStep or Speedrun runs it with the event
// (worker.Step.Event); an event sent before its wait began is kept for it.
func (h *Harness) SendEvent(ctx context.Context, workflowID int64, event string, payload any) bool {
	h.tb.Helper()
	sent, err := h.client.SendEvent(ctx, workflowID, event, payload)
	if err != nil {
		h.tb.Fatalf("workertest: sending event %q to workflow %d: %v", event, workflowID, err)
	}
	return sent
}

// AssertAwaiting fails the test unless the workflow has a step awaiting the
// event (alone, or among several: Await.Events), which has not come yet (a
// row of geneva.awaiting_events).
func (h *Harness) AssertAwaiting(ctx context.Context, workflowID int64, event string) {
	h.tb.Helper()
	rows, err := h.conn.Query(ctx, `select step_name, array_to_string(events, ' | '), $2 = any (events), timeout_at
		from geneva.awaiting_events
		where workflow_id = $1 order by execution_id`, workflowID, event)
	if err != nil {
		h.tb.Fatalf("workertest: reading what workflow %d awaits: %v", workflowID, err)
	}
	defer rows.Close()
	var awaiting []string
	for rows.Next() {
		var (
			step, name string
			among      bool
			timeoutAt  *time.Time
		)
		if err := rows.Scan(&step, &name, &among, &timeoutAt); err != nil {
			h.tb.Fatalf("workertest: reading what workflow %d awaits: %v", workflowID, err)
		}
		if among {
			return
		}
		awaiting = append(awaiting, fmt.Sprintf("step %s awaits %q", step, name))
	}
	if err := rows.Err(); err != nil {
		h.tb.Fatalf("workertest: reading what workflow %d awaits: %v", workflowID, err)
	}
	found := "it awaits no event"
	if len(awaiting) > 0 {
		found = strings.Join(awaiting, ", ")
	}
	h.tb.Fatalf("workertest: workflow %d does not await event %q: %s\n%s", workflowID, event, found, h.describe(ctx, workflowID))
}

// PerformStepInline runs one named step of a ready or paused workflow now
// (the next step when stepName is empty), replacing its scheduled execution
// (geneva.schedule_step), and returns the execution as it ended.
func (h *Harness) PerformStepInline(ctx context.Context, workflowID int64, stepName string) *goclient.StepExecution {
	h.tb.Helper()
	if _, err := h.client.ScheduleStep(ctx, workflowID, stepName); err != nil {
		h.tb.Fatalf("workertest: scheduling step %q of workflow %d: %v", stepName, workflowID, err)
	}
	return h.PerformNextStep(ctx, workflowID)
}

// SpeedrunCurrentStep runs the workflow's current step (its active
// execution's) until it ends: a resumable step through every successor it
// hands over to, a reattempted step through its reattempts, moving the clock
// to each execution's time. It stops when the workflow's active execution is
// of another step, or there is none (the workflow finished, was canceled or
// paused), and returns the step's last execution as it ended; nil when the
// workflow has no active execution. More than maxExecutions executions (100
// when zero or less) fail the test. Budgets (MaxIterations, MaxRuntime) still
// apply: each one spent is one more execution.
func (h *Harness) SpeedrunCurrentStep(ctx context.Context, workflowID int64, maxExecutions int) *goclient.StepExecution {
	h.tb.Helper()
	if maxExecutions <= 0 {
		maxExecutions = 100
	}
	current := h.activeExecution(ctx, workflowID)
	if current == nil {
		return nil
	}
	var last *goclient.StepExecution
	for executions := 0; ; executions++ {
		active := h.activeExecution(ctx, workflowID)
		if active == nil || active.StepName != current.StepName || h.workflow(ctx, workflowID).State != goclient.StateReady {
			if last == nil {
				return active
			}
			return h.execution(ctx, last.ID)
		}
		if executions == maxExecutions {
			h.tb.Fatalf("workertest: step %s of workflow %d still runs after %d executions\n%s",
				current.StepName, workflowID, maxExecutions, h.describe(ctx, workflowID))
		}
		last = h.PerformNextStep(ctx, workflowID)
	}
}

// AssertCursor fails the test unless the cursor of the workflow's active
// execution (else its latest) is want, compared as JSON (so 42 matches an
// int64 cursor of 42, and a struct its fields); a nil want asserts there is
// no cursor.
func (h *Harness) AssertCursor(ctx context.Context, workflowID int64, want any) {
	h.tb.Helper()
	execution := h.activeExecution(ctx, workflowID)
	if execution == nil {
		history := h.history(ctx, workflowID)
		if len(history) == 0 {
			h.tb.Fatalf("workertest: workflow %d has no execution", workflowID)
		}
		execution = history[len(history)-1]
	}
	got := execution.Cursor
	if want == nil {
		if len(got) != 0 && !bytes.Equal(got, []byte("null")) {
			h.tb.Fatalf("workertest: execution %d (%s) of workflow %d has cursor %s, want none\n%s",
				execution.ID, execution.StepName, workflowID, got, h.describe(ctx, workflowID))
		}
		return
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		h.tb.Fatalf("workertest: encoding the wanted cursor: %v", err)
	}
	if !jsonEqual(got, wantJSON) {
		h.tb.Fatalf("workertest: execution %d (%s) of workflow %d has cursor %s, want %s\n%s",
			execution.ID, execution.StepName, workflowID, orNone(got), wantJSON, h.describe(ctx, workflowID))
	}
}

// AssertStepHasSuccessor fails the test unless the step's latest execution is
// scheduled and continues a completed execution of the same step (a resumable
// step handed over and its successor waits to run).
func (h *Harness) AssertStepHasSuccessor(ctx context.Context, workflowID int64, stepName string) {
	h.tb.Helper()
	successor := h.latest(ctx, workflowID, stepName)
	if successor.State != goclient.ExecutionScheduled || successor.ContinuesFromID == nil {
		h.tb.Fatalf("workertest: step %s of workflow %d has no scheduled successor (its latest execution %d is %s)\n%s",
			stepName, workflowID, successor.ID, successor.State, h.describe(ctx, workflowID))
	}
	predecessor := h.execution(ctx, *successor.ContinuesFromID)
	if predecessor.StepName != stepName || predecessor.State != goclient.ExecutionCompleted {
		h.tb.Fatalf("workertest: execution %d of step %s continues execution %d (%s, %s), not a completed one of the step\n%s",
			successor.ID, stepName, predecessor.ID, predecessor.StepName, predecessor.State, h.describe(ctx, workflowID))
	}
}

// AssertWorkflowState fails the test unless the workflow is in state.
func (h *Harness) AssertWorkflowState(ctx context.Context, workflowID int64, state goclient.WorkflowState) {
	h.tb.Helper()
	if workflow := h.workflow(ctx, workflowID); workflow.State != state {
		h.tb.Fatalf("workertest: workflow %d is %s, want %s\n%s", workflowID, workflow.State, state, h.describe(ctx, workflowID))
	}
}

// AssertStepExecuted fails the test unless the step's latest execution is in
// state (e.g. goclient.ExecutionCompleted).
func (h *Harness) AssertStepExecuted(ctx context.Context, workflowID int64, stepName string, state goclient.ExecutionState) {
	h.tb.Helper()
	if execution := h.latest(ctx, workflowID, stepName); execution.State != state {
		h.tb.Fatalf("workertest: step %s of workflow %d is %s, want %s\n%s",
			stepName, workflowID, execution.State, state, h.describe(ctx, workflowID))
	}
}

// AssertStepOutcome fails the test unless the step's latest execution ended
// with outcome (e.g. goclient.OutcomeSkippedByCondition).
func (h *Harness) AssertStepOutcome(ctx context.Context, workflowID int64, stepName string, outcome goclient.Outcome) {
	h.tb.Helper()
	if got := deref(h.latest(ctx, workflowID, stepName).Outcome); got != outcome {
		h.tb.Fatalf("workertest: step %s of workflow %d ended %q, want %q\n%s",
			stepName, workflowID, got, outcome, h.describe(ctx, workflowID))
	}
}

// latest is the step's latest execution; the test fails when it never ran.
func (h *Harness) latest(ctx context.Context, workflowID int64, stepName string) *goclient.StepExecution {
	h.tb.Helper()
	history := h.history(ctx, workflowID)
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].StepName == stepName {
			return history[i]
		}
	}
	h.tb.Fatalf("workertest: step %s of workflow %d never ran\n%s", stepName, workflowID, h.describe(ctx, workflowID))
	return nil
}

// History returns the workflow's executions in order.
func (h *Harness) History(ctx context.Context, workflowID int64) []*goclient.StepExecution {
	h.tb.Helper()
	return h.history(ctx, workflowID)
}

func (h *Harness) history(ctx context.Context, workflowID int64) []*goclient.StepExecution {
	h.tb.Helper()
	history, err := h.client.StepHistory(ctx, workflowID)
	if err != nil {
		h.tb.Fatalf("workertest: reading the history of workflow %d: %v", workflowID, err)
	}
	return history
}

func (h *Harness) workflow(ctx context.Context, workflowID int64) *goclient.Workflow {
	h.tb.Helper()
	workflow, err := h.client.GetWorkflow(ctx, workflowID)
	if err != nil {
		h.tb.Fatalf("workertest: reading workflow %d: %v", workflowID, err)
	}
	return workflow
}

func (h *Harness) execution(ctx context.Context, executionID int64) *goclient.StepExecution {
	h.tb.Helper()
	execution, err := h.client.GetStepExecution(ctx, executionID)
	if err != nil {
		h.tb.Fatalf("workertest: reading execution %d: %v", executionID, err)
	}
	return execution
}

func (h *Harness) activeExecution(ctx context.Context, workflowID int64) *goclient.StepExecution {
	h.tb.Helper()
	for _, execution := range h.history(ctx, workflowID) {
		if execution.State == goclient.ExecutionScheduled || execution.State == goclient.ExecutionInProgress {
			return execution
		}
	}
	return nil
}

// describe prints a workflow's history for failure messages.
func (h *Harness) describe(ctx context.Context, workflowID int64) string {
	history, err := h.client.StepHistory(ctx, workflowID)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range history {
		fmt.Fprintf(&b, "  %d %s %s %s", e.ID, e.StepName, e.State, deref(e.Outcome))
		if len(e.Cursor) > 0 {
			fmt.Fprintf(&b, " cursor %s", e.Cursor)
		}
		if e.ContinuesFromID != nil {
			fmt.Fprintf(&b, " (continues %d)", *e.ContinuesFromID)
		}
		if e.ErrorMessage != nil {
			fmt.Fprintf(&b, " (%s: %s)", deref(e.ErrorClassName), *e.ErrorMessage)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

func orNone(raw []byte) string {
	if len(raw) == 0 {
		return "none"
	}
	return string(raw)
}
