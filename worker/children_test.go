package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// Await.Children becomes the step's "await" with "children".
func TestJoinDefinition(t *testing.T) {
	t.Parallel()
	wf := worker.NewWorkflow("Run", nil).
		Step("a", ok, &worker.StepOpts{Await: &worker.Await{Children: worker.JoinAll, Timeout: time.Hour}}).
		Step("b", ok, &worker.StepOpts{Await: &worker.Await{Children: worker.JoinN(3), Timeout: time.Minute, OnTimeout: worker.OnTimeoutCancel}})
	require.JSONEq(t, `{"steps": [
		{"name": "a", "await": {"children": "all", "timeout": 3600}},
		{"name": "b", "await": {"children": 3, "timeout": 60, "on_timeout": "cancel"}}
	]}`, string(mustDefinition(t, wf)))

	for _, c := range []struct {
		await   worker.Await
		message string
	}{
		{worker.Await{Children: "most", Timeout: time.Hour}, `await children: "most" is not JoinAll, JoinAny or JoinN(n > 0)`},
		{worker.Await{Children: worker.JoinN(0), Timeout: time.Hour}, `await children: "0" is not`},
		{worker.Await{Children: worker.JoinAny, Event: "e"}, "Await.Event and Await.Children: a step awaits one"},
		{worker.Await{Children: worker.JoinAny}, "await children: the timeout must be positive"},
		{worker.Await{Children: worker.JoinAny, Since: worker.SinceWait, Timeout: time.Hour}, "Await.Since is for events"},
	} {
		await, message := c.await, c.message
		wf := worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{Await: &await})
		require.ErrorContains(t, wf.Validate(), message)
	}
}

// Steps fan out over heroes (goclient, ParentID), a later step joins: each
// runs once, after its last child's end, with the counts.
func TestJoin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var (
		mu     sync.Mutex
		joined []worker.ChildCounts
	)
	b.start(t, &worker.Config{Workflows: []*worker.Workflow{
		worker.NewWorkflow("Run", nil).
			Step("fan_out", func(ctx context.Context, step *worker.Step) error {
				heroes := make([]string, 20)
				for i := range heroes {
					heroes[i] = fmt.Sprintf("%d-%d", step.WorkflowID, i)
				}
				_, err := b.client.CreateWorkflows(ctx, "Item", "Item", heroes, &goclient.CreateWorkflowsOpts{
					ParentID: step.WorkflowID, SkipOngoing: true, // (a repeat while they run: none twice)
				})
				return err
			}, nil).
			Step("join", func(ctx context.Context, step *worker.Step) error {
				counts, ok, err := worker.EventPayload[worker.ChildCounts](step)
				if !ok {
					counts.Children = -1 // (no event: the test fails below)
				}
				mu.Lock()
				defer mu.Unlock()
				joined = append(joined, counts)
				return err
			}, &worker.StepOpts{Await: &worker.Await{Children: worker.JoinAll, Timeout: time.Hour}}),
		worker.NewWorkflow("Item", nil).Step("work", ok, nil),
	}})
	// parents side by side: their children's ends share the worker's batches
	var ids []int64
	for range 8 {
		ids = append(ids, b.create(t, "Run"))
	}
	for _, id := range ids {
		b.waitState(t, id, goclient.StateFinished)
		children, err := b.client.ChildCounts(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, []goclient.ChildCount{{State: goclient.StateFinished, Workflows: 20}}, children)
		require.Equal(t, []string{"fan_out: success", "join: success"}, b.outcomes(t, id))
	}

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, joined, len(ids), "each join ran once")
	for _, counts := range joined {
		require.Equal(t, worker.ChildCounts{Children: 20, Ended: 20, Finished: 20}, counts)
	}
}
