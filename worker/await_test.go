package worker_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
)

// StepOpts.Await becomes the step's "await" in the definition, its timeout in
// seconds as the waits are.
func TestAwaitDefinition(t *testing.T) {
	t.Parallel()

	t.Run("BecomesJSON", func(t *testing.T) {
		t.Parallel()
		await := &worker.Await{Event: "payment_received", Timeout: 72 * time.Hour}
		wf := worker.NewWorkflow("Order", nil).
			Step("a", ok, &worker.StepOpts{Wait: time.Minute, Await: await}).
			Step("b", ok, &worker.StepOpts{Await: &worker.Await{Event: "shipped", Timeout: 1500 * time.Millisecond, OnTimeout: worker.OnTimeoutSkip}}).
			Step("c", ok, nil)
		await.Event = "changed later" // the workflow keeps its own copy

		require.JSONEq(t, `{"steps": [
			{"name": "a", "wait": 60, "await": {"event": "payment_received", "timeout": 259200}},
			{"name": "b", "await": {"event": "shipped", "timeout": 1.5, "on_timeout": "skip"}},
			{"name": "c"}
		]}`, string(mustDefinition(t, wf)))
	})

	t.Run("AnyOfSinceAndCancelOn", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Order", &worker.WorkflowOpts{CancelOn: []string{"order.canceled"}}).
			Step("a", ok, &worker.StepOpts{Await: &worker.Await{
				Events: []string{"approved", "rejected"}, Since: worker.SinceWait, Timeout: time.Hour,
			}}).
			Step("b", ok, &worker.StepOpts{Await: &worker.Await{Event: "paid", Since: worker.SinceKept, Timeout: time.Hour}})
		require.JSONEq(t, `{"steps": [
			{"name": "a", "await": {"event": ["approved", "rejected"], "since": "wait", "timeout": 3600}},
			{"name": "b", "await": {"event": "paid", "since": "kept", "timeout": 3600}}
		], "cancel_on": ["order.canceled"]}`, string(mustDefinition(t, wf)))
	})

	t.Run("EveryOnTimeout", func(t *testing.T) {
		t.Parallel()
		for _, onTimeout := range []worker.OnTimeout{worker.OnTimeoutRun, worker.OnTimeoutCancel, worker.OnTimeoutPause, worker.OnTimeoutSkip} {
			wf := worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{Await: &worker.Await{Event: "e", Timeout: time.Hour, OnTimeout: onTimeout}})
			require.JSONEq(t, `{"steps": [{"name": "a", "await": {"event": "e", "timeout": 3600, "on_timeout": "`+string(onTimeout)+`"}}]}`,
				string(mustDefinition(t, wf)))
		}
	})

	for name, c := range map[string]struct {
		await   worker.Await
		message string
	}{
		"NoEvent":          {worker.Await{Timeout: time.Hour}, "step a: await: Await.Event names no event"},
		"NoTimeout":        {worker.Await{Event: "e"}, "step a: await e: the timeout must be positive (Await.Timeout is 0s)"},
		"NegativeTimeout":  {worker.Await{Event: "e", Timeout: -time.Second}, "the timeout must be positive"},
		"TimeoutTooLong":   {worker.Await{Event: "e", Timeout: worker.LongestWait + time.Second}, "is longer than"},
		"UnknownOnTimeout": {worker.Await{Event: "e", Timeout: time.Hour, OnTimeout: "retry"}, `unknown OnTimeout "retry" (run, cancel, pause or skip)`},
		"EventTooLong":     {worker.Await{Event: strings.Repeat("e", 256), Timeout: time.Hour}, "256 bytes long; the limit is 255"},
		"EventAndEvents":   {worker.Await{Event: "e", Events: []string{"f"}, Timeout: time.Hour}, "Await.Event and Await.Events"},
		"EventsEmpty":      {worker.Await{Events: []string{}, Timeout: time.Hour}, "Await.Events is empty"},
		"EventsEmptyName":  {worker.Await{Events: []string{"e", ""}, Timeout: time.Hour}, "Await.Events has an empty name"},
		"EventsTwice":      {worker.Await{Events: []string{"e", "e"}, Timeout: time.Hour}, `Await.Events names "e" twice`},
		"EventsTooLong":    {worker.Await{Events: []string{"e", strings.Repeat("e", 256)}, Timeout: time.Hour}, "256 bytes long"},
		"UnknownSince":     {worker.Await{Event: "e", Since: "now", Timeout: time.Hour}, `unknown Since "now" (kept or wait)`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wf := worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{Await: &c.await})
			require.ErrorContains(t, wf.Validate(), c.message)
			_, err := worker.New(nil, &worker.Config{Workflows: []*worker.Workflow{wf}})
			require.ErrorContains(t, err, c.message)
		})
	}
}

// recording is a step that records the events it got (nil for none), and
// returns what then returns, if anything.
type recording struct {
	mu   sync.Mutex
	got  []*worker.Event
	then func(n int) error
}

func (r *recording) step(ctx context.Context, step *worker.Step) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, step.Event())
	if r.then != nil {
		return r.then(len(r.got))
	}
	return nil
}

func (r *recording) events() []*worker.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// awaiting waits until the workflow has a step awaiting the event.
func (b *testBundle) awaiting(t *testing.T, id int64, event string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, b.pool.QueryRow(b.ctx,
			"select count(*) from geneva.awaiting_events where workflow_id = $1 and event = $2", id, event).Scan(&n))
		return n == 1
	}, 15*time.Second, 10*time.Millisecond, "workflow %d never awaited %s", id, event)
}

func TestAwait(t *testing.T) {
	t.Parallel()
	type approval struct {
		ApprovedBy string `json:"approved_by"`
		Amount     int    `json:"amount"`
	}

	// The step runs as soon as its event comes, long before its timeout,
	// with the event's payload.
	t.Run("AStepReceivesThePayload", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		decide := &recording{}
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{worker.NewWorkflow("Expense", nil).
			Step("ask", ok, nil).
			Step("decide", decide.step, &worker.StepOpts{Await: &worker.Await{Event: "approved", Timeout: time.Hour}}).
			Step("pay", ok, nil)}})
		id := b.create(t, "Expense")
		b.awaiting(t, id, "approved")

		before := time.Now()
		sent, err := b.client.SendEvent(b.ctx, id, "approved", approval{ApprovedBy: "mia", Amount: 120})
		require.NoError(t, err)
		require.True(t, sent)
		b.waitState(t, id, goclient.StateFinished)

		require.Less(t, time.Since(before), 10*time.Second, "woken by the event, not by a poll or the timeout")
		require.Equal(t, []string{"ask: success", "decide: success", "pay: success"}, b.outcomes(t, id))
		events := decide.events()
		require.Len(t, events, 1)
		require.NotNil(t, events[0])
		require.Equal(t, "approved", events[0].Name)
		require.NotZero(t, events[0].ID)
		require.WithinDuration(t, before, events[0].SentAt, 5*time.Second)
		var got approval
		require.NoError(t, events[0].Decode(&got))
		require.Equal(t, approval{ApprovedBy: "mia", Amount: 120}, got)
	})

	// An event sent before the wait began (here in the transaction that
	// creates the workflow) is kept: the awaiting step consumes it when its
	// wait begins, due at once. (SQL never starts an awaiting step inline:
	// it gets its own job, and the event comes with start_steps.)
	t.Run("ABufferedEventIsConsumed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		decide := &recording{}
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{worker.NewWorkflow("Expense", nil).
			Step("ask", ok, nil).
			Step("decide", decide.step, &worker.StepOpts{Await: &worker.Await{Event: "approved", Timeout: time.Hour}})}})

		var id int64
		require.NoError(t, pgx.BeginFunc(b.ctx, b.pool, func(tx pgx.Tx) error {
			client := goclient.New(tx)
			var err error
			if id, err = client.CreateWorkflow(b.ctx, "Expense", "Expense", "1", nil); err != nil {
				return err
			}
			_, err = client.SendEvent(b.ctx, id, "approved", approval{ApprovedBy: "early"})
			return err
		}))
		b.waitState(t, id, goclient.StateFinished)

		require.Equal(t, []string{"ask: success", "decide: success"}, b.outcomes(t, id))
		require.Equal(t, []string{"ask: job", "decide: job"}, b.jobIDs(t, id))
		events := decide.events()
		require.Len(t, events, 1)
		require.NotNil(t, events[0], "the step got the event")
		payload, ok, err := worker.EventPayload[approval](&worker.Step{})
		require.NoError(t, err)
		require.False(t, ok, "a step with no event")
		require.Zero(t, payload)
		require.NoError(t, events[0].Decode(&payload))
		require.Equal(t, "early", payload.ApprovedBy)
	})

	// The same without inline steps, and with no payload.
	t.Run("ABufferedEventWithoutAPayload", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		decide := &recording{}
		b.start(t, &worker.Config{InlineSteps: -1, Workflows: []*worker.Workflow{worker.NewWorkflow("Expense", nil).
			Step("ask", ok, nil).
			Step("decide", decide.step, &worker.StepOpts{Await: &worker.Await{Event: "approved", Timeout: time.Hour}})}})
		id := b.create(t, "Expense")
		sent, err := b.client.SendEvent(b.ctx, id, "approved", nil)
		require.NoError(t, err)
		require.True(t, sent)
		b.waitState(t, id, goclient.StateFinished)

		require.Equal(t, []string{"ask: job", "decide: job"}, b.jobIDs(t, id))
		events := decide.events()
		require.Len(t, events, 1)
		require.NotNil(t, events[0])
		require.Nil(t, events[0].Payload, "sent with no payload")
	})

	// Two events of one name go to two awaiting steps, first in, first out.
	t.Run("EventsOfOneNameAreConsumedInOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first, second := &recording{}, &recording{}
		await := &worker.StepOpts{Await: &worker.Await{Event: "signed", Timeout: time.Hour}}
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{worker.NewWorkflow("Contract", nil).
			Step("first", first.step, await).
			Step("second", second.step, await)}})
		id := b.create(t, "Contract")
		for _, by := range []string{"ann", "bo"} {
			_, err := b.client.SendEvent(b.ctx, id, "signed", approval{ApprovedBy: by})
			require.NoError(t, err)
		}
		b.waitState(t, id, goclient.StateFinished)

		for step, want := range map[*recording]string{first: "ann", second: "bo"} {
			events := step.events()
			require.Len(t, events, 1)
			var got approval
			require.NoError(t, events[0].Decode(&got))
			require.Equal(t, want, got.ApprovedBy)
		}
		require.NotEqual(t, first.events()[0].ID, second.events()[0].ID)
	})

	// A timeout with OnTimeoutRun runs the step with no event.
	t.Run("ATimeoutRunsTheStepWithoutAnEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		decide := &recording{}
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{worker.NewWorkflow("Expense", nil).
			Step("decide", decide.step, &worker.StepOpts{Await: &worker.Await{Event: "approved", Timeout: 200 * time.Millisecond}})}})
		id := b.create(t, "Expense")
		b.waitState(t, id, goclient.StateFinished)

		require.Equal(t, []*worker.Event{nil}, decide.events())
	})

	// A step that reattempts keeps the event it consumed: the next attempt
	// gets it again, here in the same job (complete_steps' inline next
	// carries it).
	t.Run("AReattemptKeepsTheEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		decide := &recording{then: func(n int) error {
			if n == 1 {
				return worker.Reattempt(0)
			}
			return nil
		}}
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{worker.NewWorkflow("Expense", nil).
			Step("decide", decide.step, &worker.StepOpts{Await: &worker.Await{Event: "approved", Timeout: time.Hour}})}})
		id := b.create(t, "Expense")
		_, err := b.client.SendEvent(b.ctx, id, "approved", approval{ApprovedBy: "mia"})
		require.NoError(t, err)
		b.waitState(t, id, goclient.StateFinished)

		events := decide.events()
		require.Len(t, events, 2)
		require.NotNil(t, events[0])
		require.Equal(t, events[0], events[1], "the reattempt carries the event")
		require.Equal(t, string(dbtest.Operator), events[1].SentBy, "and its sender, inline too")
		require.Equal(t, []string{"decide: job", "decide: -"}, b.jobIDs(t, id), "the reattempt ran inline")
	})

	// A step awaiting any of several events runs on the first to come and
	// sees which it was, who sent it and when.
	t.Run("AnyOfTheStepSeesWhichCameAndWhoSentIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		decide := &recording{}
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{worker.NewWorkflow("Expense", nil).
			Step("ask", ok, nil).
			Step("decide", decide.step, &worker.StepOpts{Await: &worker.Await{
				Events: []string{"approved", "rejected"}, Since: worker.SinceWait, Timeout: time.Hour,
			}})}})
		id := b.create(t, "Expense")
		b.awaiting(t, id, "approved")

		before := time.Now()
		_, err := b.client.SendEvent(b.ctx, id, "rejected", map[string]string{"why": "over budget"})
		require.NoError(t, err)
		b.waitState(t, id, goclient.StateFinished)

		events := decide.events()
		require.Len(t, events, 1)
		require.NotNil(t, events[0])
		require.Equal(t, "rejected", events[0].Name)
		require.Equal(t, string(dbtest.Operator), events[0].SentBy, "the client's role, not the worker's")
		require.WithinDuration(t, before, events[0].SentAt, 5*time.Second)
	})

	// An event of the type's CancelOn cancels the workflow; the step that
	// awaited another event never runs.
	t.Run("CancelOnCancelsTheWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		decide := &recording{}
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{
			worker.NewWorkflow("Expense", &worker.WorkflowOpts{CancelOn: []string{"expense.withdrawn"}}).
				Step("ask", ok, nil).
				Step("decide", decide.step, &worker.StepOpts{Await: &worker.Await{Event: "approved", Timeout: time.Hour}})}})
		id := b.create(t, "Expense")
		b.awaiting(t, id, "approved")

		sent, err := b.client.SendEvent(b.ctx, id, "expense.withdrawn", nil)
		require.NoError(t, err)
		require.True(t, sent)
		b.waitState(t, id, goclient.StateCanceled)
		require.Equal(t, []string{"ask: success", "decide: canceled_by_event"}, b.outcomes(t, id))
		require.Empty(t, decide.events())
	})
	// A resumable step awaits the event once; each successor execution it
	// hands over to carries it.
	t.Run("AResumableStepsSuccessorsCarryTheEvent", func(t *testing.T) {
		t.Parallel()
		var (
			mu     sync.Mutex
			events []*worker.Event
		)
		wf := worker.NewWorkflow("Batch", nil).
			Step("prepare", ok, nil).
			ResumableStep("send", func(ctx context.Context, it *worker.Iteration) error {
				mu.Lock()
				events = append(events, it.Event())
				mu.Unlock()
				return worker.Iterate(ctx, it, []int{1, 2, 3}, func(ctx context.Context, item int) error { return nil })
			}, &worker.ResumableOpts{MaxIterations: 1, Await: &worker.Await{Event: "go", Timeout: time.Hour}})
		h := resumableHarness(t, wf)
		id := h.Create(context.Background(), "Batch", "Batch", "1")
		h.PerformNextStep(context.Background(), id)
		h.AssertAwaiting(context.Background(), id, "go")
		require.True(t, h.SendEvent(context.Background(), id, "go", map[string]int{"batch": 7}))

		h.Speedrun(context.Background(), id, nil)

		h.AssertWorkflowState(context.Background(), id, goclient.StateFinished)
		require.Equal(t, []string{"send suspended 1", "send suspended 2", "send suspended 3", "send success 3"}, chain(t, h, id)[1:])
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, events, 4)
		for _, event := range events {
			require.NotNil(t, event)
			require.Equal(t, events[0].ID, event.ID)
			require.JSONEq(t, `{"batch": 7}`, string(event.Payload))
		}
	})
}
