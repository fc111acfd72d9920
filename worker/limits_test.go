package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	handler := func(ctx context.Context, step *worker.Step, err error) error { return worker.Skip() }

	for name, c := range map[string]struct {
		wf      *worker.Workflow
		message string
	}{
		"HandlerWithWait": {
			worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{
				OnException: &worker.ExceptionPolicy{Handler: handler, Wait: time.Minute},
			}),
			"Handler cannot be combined with Wait",
		},
		"HandlerWithMaxReattemptsAtWorkflowLevel": {
			worker.NewWorkflow("W", nil).OnException(worker.ExceptionPolicy{Handler: handler, MaxReattempts: 3}).Step("a", ok, nil),
			"Handler cannot be combined with MaxReattempts",
		},
		"HandlerWithTerminalActionInAList": {
			worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{OnExceptionList: []worker.ExceptionPolicy{
				{Action: worker.ActionPause, Matching: []worker.Matcher{worker.ClassName("E")}},
				{Handler: handler, TerminalAction: worker.ActionCancel},
			}}),
			"Handler cannot be combined with TerminalAction",
		},
		"HandlerWithAction": {
			worker.NewWorkflow("W", nil).OnException(worker.ExceptionPolicy{Handler: handler, Action: worker.ActionPause}).Step("a", ok, nil),
			"Handler cannot be combined with Action",
		},
		"StepWaitLongerThan100Years": {
			worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{Wait: worker.LongestWait + time.Second}),
			"longer than",
		},
		"PolicyWaitLongerThan100Years": {
			worker.NewWorkflow("W", nil).OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: 200 * 365 * 24 * time.Hour}).Step("a", ok, nil),
			"Wait 1752000h0m0s is longer than",
		},
		"PolicyWaitNegative": {
			worker.NewWorkflow("W", nil).OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: -time.Second}).Step("a", ok, nil),
			"negative",
		},
		"TypeTooLong": {
			worker.NewWorkflow(strings.Repeat("é", 128), nil).Step("a", ok, nil),
			"256 bytes long; the limit is 255",
		},
		"StepNameTooLong": {
			worker.NewWorkflow("W", nil).Step(strings.Repeat("s", 256), ok, nil),
			"256 bytes long; the limit is 255",
		},
		"QueueTooLong": {
			worker.NewWorkflow("W", &worker.WorkflowOpts{Queue: strings.Repeat("q", 128)}).Step("a", ok, nil),
			"128 bytes long; the limit is 127",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.ErrorContains(t, c.wf.Validate(), c.message)
			_, err := worker.New(nil, &worker.Config{Workflows: []*worker.Workflow{c.wf}})
			require.ErrorContains(t, err, c.message)
		})
	}

	t.Run("AcceptsTheLimits", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow(strings.Repeat("W", 255), &worker.WorkflowOpts{Queue: strings.Repeat("q", 127)}).
			OnException(worker.ExceptionPolicy{Handler: handler, Matching: []worker.Matcher{worker.ClassName("E")}, Report: worker.ReportNever}).
			Step(strings.Repeat("s", 255), ok, &worker.StepOpts{Wait: worker.LongestWait})
		require.NoError(t, wf.Validate())
	})
}

func TestLongestWait(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("IsWhatSQLAccepts", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wf := worker.NewWorkflow("Longest", nil).
			OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: worker.LongestWait}).
			Step("a", ok, &worker.StepOpts{Wait: worker.LongestWait})
		w, err := worker.New(b.pool, &worker.Config{Workflows: []*worker.Workflow{wf}})
		require.NoError(t, err)
		require.NoError(t, w.Start(ctx))
		require.NoError(t, w.Stop(ctx))
	})

	t.Run("ReattemptWaitsAtMostLongestWait", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Far", nil).Step("a", func(ctx context.Context, step *worker.Step) error {
			return worker.Reattempt(200 * 365 * 24 * time.Hour)
		}, nil)
		h, _ := policyHarness(t, wf)
		start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		h.SetNow(ctx, start)
		id := h.Create(ctx, "Far", "User", "1")

		execution := h.PerformNextStep(ctx, id)

		require.Equal(t, goclient.OutcomeReattempted, *execution.Outcome)
		history := h.History(ctx, id)
		require.Len(t, history, 2)
		require.WithinDuration(t, start.Add(worker.LongestWait), history[1].ScheduledFor, time.Second)
	})
}
