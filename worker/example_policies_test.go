package worker_test

// Runnable examples, one per feature: go doc shows them beside what they
// use, and go test runs each against a real database (workertest runs the
// steps inline and moves the engine's clock over the waits).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// exampleHarness returns a harness on a new database running workflows.
func exampleHarness(workflows ...*worker.Workflow) *workertest.Harness {
	tb := dbtest.ExampleTB()
	conn := dbtest.NewConnAs(tb, dbtest.NewConfig(tb), dbtest.Harness)
	return workertest.New(tb, conn, &worker.Config{Workflows: workflows, ErrorReporter: func(context.Context, *worker.Step, error) {}})
}

// printOutcomes prints each execution of the workflow and how it ended, then
// the workflow's state.
func printOutcomes(ctx context.Context, h *workertest.Harness, id int64) {
	for _, e := range h.History(ctx, id) {
		fmt.Printf("%s: %s\n", e.StepName, *e.Outcome)
	}
	workflow, err := h.Client().GetWorkflow(ctx, id)
	must(err)
	fmt.Println("workflow", workflow.State)
}

// failingTimes returns a step that fails with err n times, then succeeds.
func failingTimes(n int, err error) worker.StepFunc {
	calls := 0
	return func(ctx context.Context, step *worker.Step) error {
		calls++
		if calls <= n {
			return err
		}
		return nil
	}
}

type exampleTimeout struct{}

func (exampleTimeout) Error() string { return "timeout" }

type exampleRateLimited struct{ retryAfter time.Duration }

func (e *exampleRateLimited) Error() string { return "rate limited" }

var errCardDeclined = errors.New("card declined")

// A step's own policy: reattempt on any error (at most 100 in a row unless
// MaxReattempts says otherwise), here after a wait.
func ExampleExceptionPolicy_reattempt() {
	ctx := context.Background()
	h := exampleHarness(worker.NewWorkflow("ResilientAPI", nil).
		Step("call_external_api", failingTimes(2, exampleTimeout{}), &worker.StepOpts{
			OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: 30 * time.Second},
		}))
	id := h.Create(ctx, "ResilientAPI", "User", "1")

	h.Speedrun(ctx, id, nil)

	printOutcomes(ctx, h, id)
	// Output:
	// call_external_api: reattempted_by_exception
	// call_external_api: reattempted_by_exception
	// call_external_api: success
	// workflow finished
}

// Reattempts run out: TerminalAction says what happens then (the default is
// to pause).
func ExampleExceptionPolicy_terminalAction() {
	ctx := context.Background()
	h := exampleHarness(worker.NewWorkflow("Flaky", nil).
		Step("flaky_api", failingTimes(100, exampleTimeout{}), &worker.StepOpts{
			OnException: &worker.ExceptionPolicy{
				Action: worker.ActionReattempt, MaxReattempts: 2, TerminalAction: worker.ActionCancel,
			},
		}))
	id := h.Create(ctx, "Flaky", "User", "1")

	h.Speedrun(ctx, id, nil)

	printOutcomes(ctx, h, id)
	// Output:
	// flaky_api: reattempted_by_exception
	// flaky_api: reattempted_by_exception
	// flaky_api: reattempts_exhausted
	// workflow canceled
}

// Workflow-level policies apply to every step without one of its own: the
// most recently added first, those with Matching before blanket ones.
// Matchers are Go error types (ErrorAs), sentinel errors (ErrorIs) and type
// names (ClassName).
func ExampleWorkflow_OnException() {
	ctx := context.Background()
	h := exampleHarness(worker.NewWorkflow("Checkout", nil).
		OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 3}).
		OnException(worker.ExceptionPolicy{Action: worker.ActionCancel,
			Matching: []worker.Matcher{worker.ErrorIs(errCardDeclined)}}).
		Step("reserve_stock", failingTimes(1, exampleTimeout{}), nil).
		Step("charge_card", failingTimes(1, fmt.Errorf("charging: %w", errCardDeclined)), nil))
	id := h.Create(ctx, "Checkout", "Order", "7")

	h.Speedrun(ctx, id, nil)

	printOutcomes(ctx, h, id)
	// Output:
	// reserve_stock: reattempted_by_exception
	// reserve_stock: success
	// charge_card: canceled_by_exception
	// workflow canceled
}

// A step's list of policies: its specific ones in order, then its first
// blanket one.
func ExampleStepOpts_onExceptionList() {
	ctx := context.Background()
	h := exampleHarness(worker.NewWorkflow("Sync", nil).
		Step("sync_events", failingTimes(2, exampleTimeout{}), &worker.StepOpts{OnExceptionList: []worker.ExceptionPolicy{
			{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[exampleTimeout]()}, MaxReattempts: 5},
			{Action: worker.ActionCancel, Matching: []worker.Matcher{worker.ErrorIs(errCardDeclined)}},
			{Action: worker.ActionSkip},
		}}).
		Step("import", failingTimes(1, errors.New("bad row")), &worker.StepOpts{OnExceptionList: []worker.ExceptionPolicy{
			{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[exampleTimeout]()}},
			{Action: worker.ActionSkip},
		}}))
	id := h.Create(ctx, "Sync", "Account", "1")

	h.Speedrun(ctx, id, nil)

	printOutcomes(ctx, h, id)
	// Output:
	// sync_events: reattempted_by_exception
	// sync_events: reattempted_by_exception
	// sync_events: success
	// import: skipped_by_exception
	// workflow finished
}

// A handler decides in Go, from the error itself, and returns flow control.
func ExampleExceptionPolicy_handler() {
	ctx := context.Background()
	h := exampleHarness(worker.NewWorkflow("Webhook", nil).
		Step("deliver", failingTimes(1, &exampleRateLimited{retryAfter: time.Minute}), &worker.StepOpts{
			OnException: &worker.ExceptionPolicy{
				Matching: []worker.Matcher{worker.ErrorAs[*exampleRateLimited]()},
				Handler: func(ctx context.Context, step *worker.Step, err error) error {
					var limited *exampleRateLimited
					errors.As(err, &limited)
					return worker.Reattempt(limited.retryAfter)
				},
			},
		}))
	id := h.Create(ctx, "Webhook", "Webhook", "w1")

	h.Speedrun(ctx, id, nil)

	printOutcomes(ctx, h, id)
	// Output:
	// deliver: reattempted_by_exception
	// deliver: success
	// workflow finished
}

// A reattempt policy can back off exponentially, up to MaxWait.
func ExampleExceptionPolicy_backoff() {
	ctx := context.Background()
	h := exampleHarness(worker.NewWorkflow("Backoff", nil).
		Step("poll", failingTimes(4, exampleTimeout{}), &worker.StepOpts{
			OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: 10 * time.Second,
				Backoff: 2, MaxWait: time.Minute},
		}))
	id := h.Create(ctx, "Backoff", "User", "1")

	h.Speedrun(ctx, id, nil)

	history := h.History(ctx, id)
	for i := 1; i < len(history); i++ {
		fmt.Println(history[i].ScheduledFor.Sub(*history[i-1].FinishedAt).Round(time.Second))
	}
	// Output:
	// 10s
	// 20s
	// 40s
	// 1m0s
}

// A step returns flow control as a value: nil when done, or Reattempt, Skip,
// Cancel, Pause, Finished or Suspend.
func Example_flowControl() {
	ctx := context.Background()
	h := exampleHarness(worker.NewWorkflow("Trial", nil).
		Step("check_payment_method", func(ctx context.Context, step *worker.Step) error {
			if step.Attempt < 2 {
				return worker.Reattempt(time.Hour) // not yet: look again in an hour
			}
			return nil
		}, nil).
		Step("send_discount", func(ctx context.Context, step *worker.Step) error {
			return worker.Skip() // nothing to offer this hero
		}, nil).
		Step("convert", func(ctx context.Context, step *worker.Step) error {
			return worker.Finished() // done early: the steps after it do not run
		}, nil).
		Step("never_runs", func(ctx context.Context, step *worker.Step) error { return nil }, nil))
	id := h.Create(ctx, "Trial", "User", "1")

	h.Speedrun(ctx, id, nil)

	printOutcomes(ctx, h, id)
	// Output:
	// check_payment_method: reattempted
	// check_payment_method: success
	// send_discount: skipped_by_flow_control
	// convert: success
	// workflow finished
}
