package examples_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/examples"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func setup(t *testing.T) (*workertest.Harness, *examples.World) {
	t.Helper()
	world := examples.NewWorld()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	h := workertest.New(t, conn, &worker.Config{Workflows: examples.Workflows(world, nil)})
	return h, world
}

func TestUserOnboarding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CanceledWhenAccountCloses", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Users["1"] = &examples.User{Email: "ann@example.com"}
		id := h.Create(ctx, "UserOnboarding", "User", "1")

		h.PerformNextStep(ctx, id)
		world.Do(func() { world.Users["1"].AccountClosed = true })
		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateCanceled)
		h.AssertStepOutcome(ctx, id, "check_profile_completion", "canceled_by_condition")
	})

	t.Run("RunsEveryStepWithItsWaits", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Users["1"] = &examples.User{Email: "ann@example.com"}
		start := time.Date(2030, 1, 1, 9, 0, 0, 0, time.Local)
		h.SetNow(ctx, start)
		id := h.Create(ctx, "UserOnboarding", "User", "1")

		workflow := h.Speedrun(ctx, id, nil)

		require.Equal(t, goclient.StateFinished, workflow.State)
		history := h.History(ctx, id)
		require.Len(t, history, 6)
		for _, execution := range history {
			require.Equal(t, goclient.OutcomeSuccess, *execution.Outcome, execution.StepName)
		}
		// 1 + 2 + 3 + 5 + 7 days of waits, on the engine's clock
		require.Equal(t, start.AddDate(0, 0, 18), history[5].ScheduledFor)
		require.True(t, world.Users["1"].OnboardingCompleted)
		require.Contains(t, world.Sent, "mail welcome to ann@example.com")
	})

	t.Run("SkipsWhatIsDone", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Users["1"] = &examples.User{Email: "bo@example.com", ProfileComplete: true, EmailVerified: true, Connections: 3}
		id := h.Create(ctx, "UserOnboarding", "User", "1")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		h.AssertStepOutcome(ctx, id, "check_profile_completion", "skipped_by_flow_control")
		h.AssertStepOutcome(ctx, id, "verify_email", "skipped_by_condition")
		h.AssertStepOutcome(ctx, id, "suggest_connections", "skipped_by_condition")
		h.AssertStepOutcome(ctx, id, "schedule_onboarding_call", "success")
	})
}

func TestPaymentProcessing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for _, c := range []struct {
		scenario string
		state    goclient.WorkflowState
		outcomes map[string]goclient.Outcome // a step's last outcome
	}{
		{"ok", goclient.StateFinished, map[string]goclient.Outcome{"notify_fulfillment": goclient.OutcomeSuccess}},
		{"invalid_method", goclient.StateCanceled, map[string]goclient.Outcome{"validate_payment_method": goclient.OutcomeCanceledByFlowControl}},
		{"declined", goclient.StateCanceled, map[string]goclient.Outcome{"authorize_payment": goclient.OutcomeCanceledByFlowControl}},
		{"rate_limited", goclient.StateFinished, map[string]goclient.Outcome{"authorize_payment": goclient.OutcomeSuccess}},
		{"fraud", goclient.StatePaused, map[string]goclient.Outcome{"capture_payment": goclient.OutcomePausedByFlowControl}},
		{"auth_expired", goclient.StateFinished, map[string]goclient.Outcome{"capture_payment": goclient.OutcomeSuccess}},
		{"inventory_timeout", goclient.StateFinished, map[string]goclient.Outcome{"update_inventory": goclient.OutcomeSuccess}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			t.Parallel()
			h, world := setup(t)
			world.Payments["1001"] = &examples.Payment{Amount: 4200, Scenario: c.scenario}
			id := h.Create(ctx, "PaymentProcessing", "Payment", "1001")

			workflow := h.Speedrun(ctx, id, nil)

			require.Equal(t, c.state, workflow.State)
			for step, outcome := range c.outcomes {
				h.AssertStepOutcome(ctx, id, step, outcome)
			}
		})
	}

	t.Run("InventoryTimeoutsAreReattemptedByPolicy", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Payments["1001"] = &examples.Payment{Scenario: "inventory_timeout"}
		id := h.Create(ctx, "PaymentProcessing", "Payment", "1001")

		h.Speedrun(ctx, id, nil)

		var outcomes []goclient.Outcome
		for _, execution := range h.History(ctx, id) {
			if execution.StepName == "update_inventory" {
				outcomes = append(outcomes, *execution.Outcome)
				if *execution.Outcome == "reattempted_by_exception" {
					require.Equal(t, "*examples.InventoryTimeoutError", *execution.ErrorClassName)
					require.Equal(t, []string{"*examples.InventoryTimeoutError", "*fmt.wrapError"}, execution.ErrorClasses)
				}
			}
		}
		require.Equal(t, []goclient.Outcome{goclient.OutcomeReattemptedByException, goclient.OutcomeReattemptedByException, goclient.OutcomeSuccess}, outcomes)
	})

	t.Run("FraudReviewThenResume", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Payments["1001"] = &examples.Payment{Scenario: "fraud"}
		id := h.Create(ctx, "PaymentProcessing", "Payment", "1001")
		h.Speedrun(ctx, id, nil)
		h.AssertWorkflowState(ctx, id, goclient.StatePaused)

		world.Do(func() { world.Payments["1001"].FraudCleared = true })
		_, err := h.Client().ResumeWorkflow(ctx, id)
		require.NoError(t, err)
		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		require.True(t, world.Payments["1001"].Fulfilled)
	})
}

func TestWebhookDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("FinishesOnDelivery", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Webhooks["1"] = &examples.Webhook{FailuresBeforeSuccess: 6}
		id := h.Create(ctx, "WebhookDelivery", "Webhook", "1")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		history := h.History(ctx, id)
		require.Len(t, history, 7)
		require.Equal(t, "step_7", history[6].StepName)
		require.Equal(t, "delivered", world.Webhooks["1"].Status)
	})

	t.Run("MarksUndeliverableAfterTheLadder", func(t *testing.T) {
		t.Parallel()
		h, world := setup(t)
		world.Webhooks["1"] = &examples.Webhook{FailuresBeforeSuccess: -1}
		id := h.Create(ctx, "WebhookDelivery", "Webhook", "1")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		history := h.History(ctx, id)
		require.Len(t, history, 18)
		for i := 0; i < 17; i++ {
			require.Equal(t, fmt.Sprintf("step_%d", i+1), history[i].StepName)
		}
		h.AssertStepOutcome(ctx, id, "mark_undeliverable", "success")
		require.Equal(t, "failed", world.Webhooks["1"].Status)
		require.Equal(t, 17, world.Webhooks["1"].Attempts)
	})
}
