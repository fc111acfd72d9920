package workertest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// recorder is a TB that records a failure instead of failing the test.
type recorder struct {
	mu     sync.Mutex
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// fails runs f with a recorder and returns the failure it recorded.
func fails(f func(tb workertest.TB)) string {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failed
}

var ctx = context.Background()

func ok(ctx context.Context, step *worker.Step) error { return nil }

// slowWorkflow has a day's wait before each step after the first.
var slowWorkflow = worker.NewWorkflow("Slow", nil).
	Step("a", ok, nil).
	Step("b", ok, &worker.StepOpts{Wait: 24 * time.Hour}).
	Step("c", ok, &worker.StepOpts{Wait: 24 * time.Hour})

func newHarness(t *testing.T, workflows ...*worker.Workflow) *workertest.Harness {
	t.Helper()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	return workertest.New(t, conn, &worker.Config{Workflows: workflows})
}

func TestHarness(t *testing.T) {
	t.Parallel()

	t.Run("AssertionsFailWithTheHistory", func(t *testing.T) {
		t.Parallel()
		conf := dbtest.NewConfig(t)

		failure := fails(func(tb workertest.TB) {
			h := workertest.New(tb, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{slowWorkflow}})
			id := h.Create(ctx, "Slow", "User", "1")
			h.PerformNextStep(ctx, id)
			h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		})
		require.Contains(t, failure, "is ready, want finished")
		require.Contains(t, failure, "a completed success", "the history is in the message")

		failure = fails(func(tb workertest.TB) {
			h := workertest.New(tb, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{slowWorkflow}})
			id := h.Create(ctx, "Slow", "User", "2")
			h.AssertStepExecuted(ctx, id, "c", goclient.ExecutionCompleted)
		})
		require.Contains(t, failure, "never ran")

		failure = fails(func(tb workertest.TB) {
			h := workertest.New(tb, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{slowWorkflow}})
			id := h.Create(ctx, "Slow", "User", "3")
			h.AssertStepExecuted(ctx, id, "a", goclient.ExecutionCompleted)
		})
		require.Contains(t, failure, "step a of workflow 3 is scheduled, want completed")
	})

	t.Run("PerformNextStepMovesClockToItsTime", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, slowWorkflow)
		start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.Local)
		h.SetNow(ctx, start)
		id := h.Create(ctx, "Slow", "User", "1")

		a := h.PerformNextStep(ctx, id)
		b := h.PerformNextStep(ctx, id)

		require.Equal(t, "a", a.StepName)
		require.Equal(t, goclient.OutcomeSuccess, *a.Outcome)
		require.Equal(t, "b", b.StepName)
		require.Equal(t, start.Add(24*time.Hour), b.ScheduledFor)
		require.Equal(t, start.Add(24*time.Hour), *b.StartedAt, "the clock moved to b's time, not past it")
		require.Equal(t, start.Add(24*time.Hour), h.Now(ctx))
	})

	t.Run("PerformNextStepReturnsNilWhenNothingIsActive", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, slowWorkflow)
		id := h.Create(ctx, "Slow", "User", "1")
		h.Speedrun(ctx, id, nil)

		require.Nil(t, h.PerformNextStep(ctx, id))
	})

	t.Run("PerformStepInlineRunsNamedStepNow", func(t *testing.T) {
		t.Parallel()
		var ran []string
		wf := worker.NewWorkflow("Inline", nil).
			Step("a", func(ctx context.Context, step *worker.Step) error { ran = append(ran, "a"); return nil }, nil).
			Step("b", func(ctx context.Context, step *worker.Step) error { ran = append(ran, "b"); return nil }, &worker.StepOpts{Wait: time.Hour})
		h := newHarness(t, wf)
		id := h.Create(ctx, "Inline", "User", "1")

		execution := h.PerformStepInline(ctx, id, "b")

		require.Equal(t, "b", execution.StepName)
		require.Equal(t, goclient.OutcomeSuccess, *execution.Outcome)
		require.Equal(t, []string{"b"}, ran)
		h.AssertStepOutcome(ctx, id, "a", "canceled_externally")
		h.AssertWorkflowState(ctx, id, goclient.StateFinished)

		failure := fails(func(tb workertest.TB) {
			other := workertest.New(tb, dbtest.NewConn(t, dbtest.NewConfig(t)), &worker.Config{Workflows: []*worker.Workflow{wf}})
			otherID := other.Create(ctx, "Inline", "User", "1")
			other.PerformStepInline(ctx, otherID, "nope")
		})
		require.Contains(t, failure, `scheduling step "nope"`)
		require.Contains(t, failure, "has no step nope")
	})

	t.Run("SpeedrunIgnoresWaits", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, slowWorkflow)
		id := h.Create(ctx, "Slow", "User", "1")
		before := h.Now(ctx)

		workflow := h.Speedrun(ctx, id, nil)

		require.Equal(t, goclient.StateFinished, workflow.State)
		h.AssertStepExecuted(ctx, id, "c", goclient.ExecutionCompleted)
		require.Len(t, h.History(ctx, id), 3)
		require.GreaterOrEqual(t, h.Now(ctx).Sub(before), 48*time.Hour)
	})

	t.Run("SpeedrunStopsAtPause", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Pausing", nil).
			Step("a", ok, nil).
			Step("b", func(ctx context.Context, step *worker.Step) error { return errors.New("boom") }, nil).
			Step("c", ok, nil)
		h := newHarness(t, wf)
		id := h.Create(ctx, "Pausing", "User", "1")

		workflow := h.Speedrun(ctx, id, nil)

		require.Equal(t, goclient.StatePaused, workflow.State)
		h.AssertStepOutcome(ctx, id, "b", "paused_by_exception")
	})

	t.Run("SpeedrunGivesUpAfterMaxSteps", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Forever", nil).
			Step("a", func(ctx context.Context, step *worker.Step) error { return worker.Reattempt(time.Minute) }, nil)
		conn := dbtest.NewConn(t, dbtest.NewConfig(t))

		failure := fails(func(tb workertest.TB) {
			h := workertest.New(tb, conn, &worker.Config{Workflows: []*worker.Workflow{wf}})
			id := h.Create(ctx, "Forever", "User", "1")
			h.Speedrun(ctx, id, &workertest.SpeedrunOpts{MaxSteps: 5})
		})

		require.Contains(t, failure, "still runs after 5 steps")
	})

	t.Run("FailsAtOnceWithoutTheTestClock", func(t *testing.T) {
		t.Parallel()
		conf := dbtest.NewConfig(t)
		conn := dbtest.NewConn(t, conf) // the schema's owner
		_, err := conn.Exec(ctx, "select geneva.allow_fake_clock(false)")
		require.NoError(t, err)

		ran := 0
		failure := fails(func(tb workertest.TB) {
			h := workertest.New(tb, conn, &worker.Config{Workflows: []*worker.Workflow{slowWorkflow}})
			id := h.Create(ctx, "Slow", "User", "1")
			ran = -1
			h.Speedrun(ctx, id, nil)
			ran = 1
		})

		require.Equal(t, -1, ran, "Speedrun failed the test")
		require.Contains(t, failure, "geneva.now() ignores geneva.fake_now")
		require.Contains(t, failure, "select geneva.allow_fake_clock(true)")
		require.Contains(t, failure, "schema's owner")
		require.NotContains(t, failure, "still runs after")

		failure = fails(func(tb workertest.TB) {
			h := workertest.New(tb, conn, &worker.Config{Workflows: []*worker.Workflow{slowWorkflow}})
			h.SetNow(ctx, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		})
		require.Contains(t, failure, "select geneva.allow_fake_clock(true)", "SetNow checks too")

		_, err = conn.Exec(ctx, "select geneva.allow_fake_clock(true)")
		require.NoError(t, err)
		failure = fails(func(tb workertest.TB) {
			h := workertest.New(tb, conn, &worker.Config{Workflows: []*worker.Workflow{slowWorkflow}})
			id := h.Create(ctx, "Slow", "User", "2")
			h.Speedrun(ctx, id, nil)
			h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		})
		require.Empty(t, failure, "with the test clock allowed, the same harness runs")
	})
}
