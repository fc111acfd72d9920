package workertest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// A test runs a workflow's steps inline through the real SQL functions,
// skipping its waits by moving the engine's clock, then asserts on the rows.
// In a test, pass t instead of dbtest.ExampleTB().
func Example() {
	ctx := context.Background()
	onboarding := worker.NewWorkflow("Onboarding", nil).
		Step("send_welcome", func(ctx context.Context, step *worker.Step) error { return nil }, nil).
		Step("send_reminder", func(ctx context.Context, step *worker.Step) error { return nil },
			&worker.StepOpts{Wait: 48 * time.Hour})

	tb := dbtest.ExampleTB()
	h := workertest.New(tb, dbtest.NewConnAs(tb, dbtest.NewConfig(tb), dbtest.Harness), &worker.Config{
		Workflows: []*worker.Workflow{onboarding},
	})
	id := h.Create(ctx, "Onboarding", "User", "42")
	start := h.Now(ctx)

	workflow := h.Speedrun(ctx, id, nil)

	h.AssertWorkflowState(ctx, id, goclient.StateFinished)
	h.AssertStepExecuted(ctx, id, "send_reminder", goclient.ExecutionCompleted)
	fmt.Println(workflow.State, "after", h.Now(ctx).Sub(start).Round(time.Hour), "of engine time")
	// Output:
	// finished after 48h0m0s of engine time
}
