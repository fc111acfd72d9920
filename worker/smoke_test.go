package worker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	var calls atomic.Int32
	step := func(ctx context.Context, s *worker.Step) error { calls.Add(1); return nil }
	wf := worker.NewWorkflow("Smoke", nil).Step("a", step, nil).Step("b", step, nil).Step("c", step, &worker.StepOpts{Wait: time.Second})
	w, err := worker.New(pool, &worker.Config{Workflows: []*worker.Workflow{wf}})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	defer w.Stop(ctx)
	id, err := w.Client().CreateWorkflow(ctx, "Smoke", "User", "1", nil)
	require.NoError(t, err)
	start := time.Now()
	require.Eventually(t, func() bool {
		got, err := w.Client().GetWorkflow(ctx, id)
		require.NoError(t, err)
		return got.State == goclient.StateFinished
	}, 20*time.Second, 10*time.Millisecond)
	t.Logf("finished in %s", time.Since(start))
	require.EqualValues(t, 3, calls.Load())
}
