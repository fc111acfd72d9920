package workertest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// TestStepGroup: a step sees its workflow's group, in its own job and in the
// one that ran its predecessor.
func TestStepGroup(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		groups []string
	)
	record := func(ctx context.Context, step *worker.Step) error {
		mu.Lock()
		defer mu.Unlock()
		groups = append(groups, step.Group)
		return nil
	}
	h := newHarness(t, worker.NewWorkflow("Grouped", nil).Step("a", record, nil).Step("b", record, nil))
	id, err := h.Client().CreateWorkflow(ctx, "Grouped", "Account", "1", &goclient.CreateWorkflowOpts{Group: "acme"})
	require.NoError(t, err)
	ungrouped := h.Create(ctx, "Grouped", "Account", "2")

	require.Equal(t, goclient.StateFinished, h.Speedrun(ctx, id, nil).State)
	require.Equal(t, goclient.StateFinished, h.Speedrun(ctx, ungrouped, nil).State)
	require.Equal(t, []string{"acme", "acme", "", ""}, groups)
}
