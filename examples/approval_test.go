package examples_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/examples"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
)

// The expense approval example with a real worker: one expense's manager
// approves it from SQL, as psql would, and it is reimbursed; the other's
// never does, and when the 48 hours (here 1.5 s) pass it is escalated.
func TestExpenseApprovalWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	client := goclient.New(pool)

	world := examples.NewWorld()
	world.Expenses["1"] = &examples.Expense{Submitter: "ann@example.com", Manager: "mia@example.com", Amount: 12050, Description: "train to Lyon"}
	world.Expenses["2"] = &examples.Expense{Submitter: "bo@example.com", Manager: "max@example.com", Amount: 990, Description: "lunch"}
	w, err := worker.New(pool, &worker.Config{
		Workflows: []*worker.Workflow{examples.ExpenseApproval(world, &examples.Options{Compress: float64(examples.ApprovalWindow) / float64(1500*time.Millisecond)})},
		River:     &river.Config{FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond},
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(stopCtx))
	}()

	approved, err := client.CreateWorkflow(ctx, "ExpenseApproval", "Expense", "1", nil)
	require.NoError(t, err)
	escalated, err := client.CreateWorkflow(ctx, "ExpenseApproval", "Expense", "2", nil)
	require.NoError(t, err)

	// the manager's inbox: both await the approval
	require.Eventually(t, func() bool {
		awaiting, err := client.AwaitingEvents(ctx, &goclient.AwaitingEventsParams{Event: examples.ApprovalEvent})
		require.NoError(t, err)
		return len(awaiting) == 2
	}, 10*time.Second, 5*time.Millisecond)
	var sent bool
	require.NoError(t, pool.QueryRow(ctx, `select geneva.send_event($1, 'expense_approved', '{"approved_by": "mia@example.com"}')`,
		approved).Scan(&sent))
	require.True(t, sent)

	outcomes := func(id int64) []string {
		timeline, err := client.Timeline(ctx, id)
		require.NoError(t, err)
		var steps []string
		for _, e := range timeline {
			steps = append(steps, e.StepName+" "+string(*e.Outcome))
		}
		return steps
	}
	for _, id := range []int64{approved, escalated} {
		require.Eventually(t, func() bool {
			workflow, err := client.GetWorkflow(ctx, id)
			require.NoError(t, err)
			return workflow.State == goclient.StateFinished
		}, 20*time.Second, 5*time.Millisecond)
	}

	require.Equal(t, []string{
		"request_approval success", "record_decision success", "escalate skipped_by_condition", "reimburse success",
	}, outcomes(approved))
	require.Equal(t, []string{
		"request_approval success", "record_decision success", "escalate success",
	}, outcomes(escalated), "the escalation ends the workflow")
	world.Do(func() {
		require.Equal(t, "mia@example.com", world.Expenses["1"].ApprovedBy)
		require.False(t, world.Expenses["1"].ApprovedAt.IsZero())
		require.True(t, world.Expenses["1"].Reimbursed)
		require.False(t, world.Expenses["1"].Escalated)
		require.True(t, world.Expenses["2"].Escalated)
		require.False(t, world.Expenses["2"].Reimbursed)
		require.Contains(t, world.Sent, "mail approval request for expense 1 ($120.50, train to Lyon) to mia@example.com")
		require.Contains(t, world.Sent, "reimburse $120.50 to ann@example.com (approved by mia@example.com)")
		require.Contains(t, world.Sent, "mail escalation of expense 2 ($9.90) to the finance director: max@example.com did not decide within 48h0m0s")
	})
}

// The same with the test harness, the clock moved by hand.
func TestExpenseApproval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Date(2030, 1, 1, 9, 0, 0, 0, time.Local)

	t.Run("ApprovedWithinTheWindow", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Expenses["1"] = &examples.Expense{Submitter: "ann@example.com", Manager: "mia@example.com", Amount: 4000}
		h.SetNow(ctx, start)
		id := h.Create(ctx, "ExpenseApproval", "Expense", "1")

		h.PerformNextStep(ctx, id)
		h.AssertAwaiting(ctx, id, examples.ApprovalEvent)
		h.Advance(ctx, 47*time.Hour) // just in time
		require.True(t, h.SendEvent(ctx, id, examples.ApprovalEvent, examples.Approval{ApprovedBy: "mia@example.com", Note: "ok"}))
		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		h.AssertStepOutcome(ctx, id, "escalate", "skipped_by_condition")
		h.AssertStepOutcome(ctx, id, "reimburse", "success")
		world.Do(func() {
			require.Equal(t, "mia@example.com", world.Expenses["1"].ApprovedBy)
			require.True(t, world.Expenses["1"].ApprovedAt.Equal(start.Add(47*time.Hour)), "the event's SentAt")
			require.True(t, world.Expenses["1"].Reimbursed)
		})
	})

	t.Run("EscalatedAfter48Hours", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Expenses["1"] = &examples.Expense{Submitter: "ann@example.com", Manager: "mia@example.com", Amount: 4000}
		h.SetNow(ctx, start)
		id := h.Create(ctx, "ExpenseApproval", "Expense", "1")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, start.Add(examples.ApprovalWindow), h.Now(ctx), "Speedrun moved the clock to the timeout")
		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		h.AssertStepOutcome(ctx, id, "escalate", "success")
		require.Len(t, h.History(ctx, id), 3, "no reimbursement")
		world.Do(func() {
			require.True(t, world.Expenses["1"].Escalated)
			require.False(t, world.Expenses["1"].Reimbursed)
		})
		// a late approval: the workflow has ended, nothing is recorded
		require.False(t, h.SendEvent(ctx, id, examples.ApprovalEvent, examples.Approval{ApprovedBy: "mia@example.com"}))
	})

	t.Run("ApprovedBeforeTheRequestWentOut", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Expenses["1"] = &examples.Expense{Submitter: "ann@example.com", Manager: "mia@example.com", Amount: 4000}
		id := h.Create(ctx, "ExpenseApproval", "Expense", "1")
		require.True(t, h.SendEvent(ctx, id, examples.ApprovalEvent, map[string]string{"approved_by": "mia@example.com"}))

		h.Speedrun(ctx, id, nil)

		h.AssertStepOutcome(ctx, id, "reimburse", "success")
	})

	t.Run("AnApprovalWithoutApproverPauses", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Expenses["1"] = &examples.Expense{Submitter: "ann@example.com", Manager: "mia@example.com", Amount: 4000}
		id := h.Create(ctx, "ExpenseApproval", "Expense", "1")
		require.True(t, h.SendEvent(ctx, id, examples.ApprovalEvent, nil))

		workflow := h.Speedrun(ctx, id, nil)

		require.Equal(t, goclient.StatePaused, workflow.State)
		h.AssertStepOutcome(ctx, id, "record_decision", "paused_by_exception")
	})
}
