package workertest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// approval asks, then awaits "approved" for two days; decide records the
// event it got (nil on a timeout).
type approval struct {
	mu  sync.Mutex
	got []*worker.Event
}

func (a *approval) workflow(workflowType string, onTimeout worker.OnTimeout) *worker.Workflow {
	return worker.NewWorkflow(workflowType, nil).
		Step("ask", ok, nil).
		Step("decide", func(ctx context.Context, step *worker.Step) error {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.got = append(a.got, step.Event())
			return nil
		}, &worker.StepOpts{Await: &worker.Await{Event: "approved", Timeout: 48 * time.Hour, OnTimeout: onTimeout}}).
		Step("done", ok, nil)
}

func (a *approval) events() []*worker.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.got
}

func TestHarnessEvents(t *testing.T) {
	t.Parallel()
	start := time.Date(2030, 1, 1, 9, 0, 0, 0, time.Local)

	t.Run("SendEventWakesTheAwaitingStep", func(t *testing.T) {
		t.Parallel()
		a := &approval{}
		h := newHarness(t, a.workflow("Approval", ""))
		h.SetNow(ctx, start)
		id := h.Create(ctx, "Approval", "Expense", "1")

		h.PerformNextStep(ctx, id)
		h.AssertAwaiting(ctx, id, "approved")
		h.Advance(ctx, time.Hour)
		require.True(t, h.SendEvent(ctx, id, "approved", map[string]string{"by": "mia"}))
		workflow := h.Speedrun(ctx, id, nil)

		require.Equal(t, goclient.StateFinished, workflow.State)
		require.Len(t, a.events(), 1)
		event := a.events()[0]
		require.NotNil(t, event, "the step got the event")
		require.Equal(t, "approved", event.Name)
		require.JSONEq(t, `{"by": "mia"}`, string(event.Payload))
		require.True(t, event.SentAt.Equal(start.Add(time.Hour)), "sent at the engine's clock: %s", event.SentAt)
		require.Equal(t, start.Add(time.Hour), h.Now(ctx), "no timeout passed: the clock did not move")
		h.AssertStepOutcome(ctx, id, "decide", "success")
		require.False(t, h.SendEvent(ctx, id, "approved", nil), "an ended workflow records no event")
	})

	t.Run("AnEventSentBeforeTheWaitIsKept", func(t *testing.T) {
		t.Parallel()
		a := &approval{}
		h := newHarness(t, a.workflow("Approval", ""))
		h.SetNow(ctx, start)
		id := h.Create(ctx, "Approval", "Expense", "1")

		require.True(t, h.SendEvent(ctx, id, "approved", nil), "before ask ran")
		h.Speedrun(ctx, id, nil)

		require.Len(t, a.events(), 1)
		require.NotNil(t, a.events()[0])
		require.Nil(t, a.events()[0].Payload, "sent with no payload (NULL)")
		require.Equal(t, start, h.Now(ctx))
	})

	t.Run("SpeedrunPassesTheTimeout", func(t *testing.T) {
		t.Parallel()
		a := &approval{}
		h := newHarness(t, a.workflow("Approval", worker.OnTimeoutRun))
		h.SetNow(ctx, start)
		id := h.Create(ctx, "Approval", "Expense", "1")

		workflow := h.Speedrun(ctx, id, nil)

		require.Equal(t, goclient.StateFinished, workflow.State)
		require.Equal(t, []*worker.Event{nil}, a.events(), "the step ran without an event")
		require.Equal(t, start.Add(48*time.Hour), h.Now(ctx), "the clock moved to the timeout")
	})

	for onTimeout, want := range map[worker.OnTimeout]struct {
		state   goclient.WorkflowState
		outcome goclient.Outcome
	}{
		worker.OnTimeoutCancel: {goclient.StateCanceled, "canceled_by_timeout"},
		worker.OnTimeoutPause:  {goclient.StatePaused, "paused_by_timeout"},
		worker.OnTimeoutSkip:   {goclient.StateFinished, "skipped_by_timeout"},
	} {
		t.Run("SpeedrunTimesOutWith"+string(onTimeout), func(t *testing.T) {
			t.Parallel()
			a := &approval{}
			h := newHarness(t, a.workflow("Approval", onTimeout))
			h.SetNow(ctx, start)
			id := h.Create(ctx, "Approval", "Expense", "1")

			workflow := h.Speedrun(ctx, id, nil)

			require.Equal(t, want.state, workflow.State)
			h.AssertStepOutcome(ctx, id, "decide", want.outcome)
			require.Empty(t, a.events(), "the step did not run")
			require.Equal(t, start.Add(48*time.Hour), h.Now(ctx))
		})
	}

	// A step awaiting any of several events: AssertAwaiting names any of
	// them, and the step sees which came and who sent it.
	t.Run("AnyOfSeveralEvents", func(t *testing.T) {
		t.Parallel()
		var got *worker.Event
		h := newHarness(t, worker.NewWorkflow("Claim", nil).
			Step("file", ok, nil).
			Step("decide", func(ctx context.Context, step *worker.Step) error {
				got = step.Event()
				return nil
			}, &worker.StepOpts{Await: &worker.Await{
				Events: []string{"approved", "rejected"}, Since: worker.SinceWait, Timeout: time.Hour,
			}}))
		h.SetNow(ctx, start)
		id := h.Create(ctx, "Claim", "Claim", "1")
		h.PerformNextStep(ctx, id)
		h.AssertAwaiting(ctx, id, "rejected")
		require.True(t, h.SendEvent(ctx, id, "rejected", nil))
		require.Equal(t, goclient.StateFinished, h.Speedrun(ctx, id, nil).State)
		require.NotNil(t, got)
		require.Equal(t, "rejected", got.Name)
		require.NotEmpty(t, got.SentBy)
	})

	t.Run("AssertAwaitingFails", func(t *testing.T) {
		t.Parallel()
		conf := dbtest.NewConfig(t)
		a := &approval{}
		wf := a.workflow("Approval", "")

		failure := fails(func(tb workertest.TB) {
			h := workertest.New(tb, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{wf}})
			id := h.Create(ctx, "Approval", "Expense", "1")
			h.AssertAwaiting(ctx, id, "approved") // ask has not run
		})
		require.Contains(t, failure, `does not await event "approved": it awaits no event`)
		require.Contains(t, failure, "ask scheduled", "the history is in the message")

		failure = fails(func(tb workertest.TB) {
			h := workertest.New(tb, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{wf}})
			id := h.Create(ctx, "Approval", "Expense", "2")
			h.PerformNextStep(ctx, id)
			h.AssertAwaiting(ctx, id, "rejected")
		})
		require.Contains(t, failure, `does not await event "rejected": step decide awaits "approved"`)

		failure = fails(func(tb workertest.TB) {
			h := workertest.New(tb, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{wf}})
			id := h.Create(ctx, "Approval", "Expense", "3")
			h.PerformNextStep(ctx, id)
			h.SendEvent(ctx, id, "approved", nil)
			h.AssertAwaiting(ctx, id, "approved") // it came
		})
		require.Contains(t, failure, "it awaits no event")
	})

	t.Run("SendEventFailsOnBadInput", func(t *testing.T) {
		t.Parallel()
		conf := dbtest.NewConfig(t)
		a := &approval{}
		failure := fails(func(tb workertest.TB) {
			h := workertest.New(tb, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{a.workflow("Approval", "")}})
			h.SendEvent(ctx, 424242, "approved", nil)
		})
		require.Contains(t, failure, `sending event "approved" to workflow 424242`)

		failure = fails(func(tb workertest.TB) {
			h := workertest.New(tb, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{a.workflow("Approval", "")}})
			id := h.Create(ctx, "Approval", "Expense", "1")
			h.SendEvent(ctx, id, "", nil)
		})
		require.Contains(t, failure, `sending event "" to workflow`)
	})
}
