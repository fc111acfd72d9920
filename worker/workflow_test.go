package worker_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/worker"
)

func definitionOf(t *testing.T, wf *worker.Workflow) map[string]any {
	t.Helper()
	raw, err := wf.Definition()
	require.NoError(t, err)
	var definition map[string]any
	require.NoError(t, json.Unmarshal(raw, &definition))
	return definition
}

func stepNames(t *testing.T, wf *worker.Workflow) []string {
	t.Helper()
	var names []string
	for _, step := range definitionOf(t, wf)["steps"].([]any) {
		names = append(names, step.(map[string]any)["name"].(string))
	}
	return names
}

func TestWorkflowDefinition(t *testing.T) {
	t.Parallel()

	t.Run("AnonymousStepsCountEveryStep", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Ladder", nil).Step("first", ok, nil)
		for range 3 {
			wf.Step("", ok, &worker.StepOpts{Wait: time.Minute})
		}
		require.Equal(t, []string{"first", "step_2", "step_3", "step_4"}, stepNames(t, wf))
	})

	t.Run("AfterStartBecomesAfter", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Trial", nil).
			Step("welcome", ok, nil).
			Step("remind", ok, &worker.StepOpts{AfterStart: 15 * 24 * time.Hour}).
			Step("charge", ok, &worker.StepOpts{Wait: time.Hour, AfterStart: 30 * 24 * time.Hour})
		require.JSONEq(t, `{"steps": [{"name": "welcome"}, {"name": "remind", "after": 1296000},
			{"name": "charge", "wait": 3600, "after": 2592000}]}`, string(mustDefinition(t, wf)))

		for opts, want := range map[*worker.StepOpts]string{
			{AfterStart: -time.Second}:                     "negative AfterStart",
			{AfterStart: worker.LongestWait + time.Second}: "AfterStart 876600h0m1s is longer than",
		} {
			_, err := worker.NewWorkflow("Bad", nil).Step("a", ok, opts).Definition()
			require.ErrorContains(t, err, want)
		}
	})

	t.Run("BeforeAndAfterPlaceSteps", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Placed", nil).
			Step("a", ok, nil).
			Step("c", ok, nil).
			Step("b", ok, &worker.StepOpts{After: "a"}).
			Step("start", ok, &worker.StepOpts{Before: "a"})
		require.Equal(t, []string{"start", "a", "b", "c"}, stepNames(t, wf))
	})

	t.Run("ExtendCopiesAndStaysApart", func(t *testing.T) {
		t.Parallel()
		base := worker.NewWorkflow("Base", &worker.WorkflowOpts{Queue: "billing", Priority: 2}).
			OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 3}).
			Step("validate", ok, nil)
		invoice := base.Extend("Invoice", nil).Step("send", ok, nil)
		refund := base.Extend("Refund", nil).Step("refund", ok, &worker.StepOpts{Before: "validate"})
		base.Step("later", ok, nil)

		require.Equal(t, "Invoice", invoice.Type())
		require.Equal(t, []string{"validate", "send"}, stepNames(t, invoice))
		require.Equal(t, []string{"refund", "validate"}, stepNames(t, refund))
		require.Equal(t, []string{"validate", "later"}, stepNames(t, base))
		definition := definitionOf(t, invoice)
		require.Equal(t, "billing", definition["queue"])
		require.EqualValues(t, 2, definition["priority"])
		require.Equal(t, []any{map[string]any{"action": "reattempt", "max_reattempts": float64(3)}}, definition["on_exception"])
	})

	t.Run("PoliciesAndConditionsBecomeJSON", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Full", &worker.WorkflowOpts{MayProceedWithoutHero: true}).
			CancelIf("closed", func(ctx context.Context, step *worker.Step) (bool, error) { return false, nil }).
			OnException(worker.ExceptionPolicy{Action: worker.ActionCancel, Matching: []worker.Matcher{worker.ErrorAs[*net.OpError]()}}).
			OnException(worker.ExceptionPolicy{Handler: func(ctx context.Context, step *worker.Step, err error) error { return nil }, Report: worker.ReportNever}).
			Step("a", ok, &worker.StepOpts{
				Wait:   90 * time.Second,
				SkipIf: func(ctx context.Context, step *worker.Step) (bool, error) { return false, nil },
				OnException: &worker.ExceptionPolicy{
					Action: worker.ActionReattempt, Wait: 500 * time.Millisecond, MaxReattempts: worker.Unlimited,
					TerminalAction: worker.ActionSkip, Report: worker.ReportTerminalOnly,
				},
			}).
			Step("b", ok, &worker.StepOpts{
				Skip: true,
				OnExceptionList: []worker.ExceptionPolicy{
					{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ClassName("Timeout"), worker.ClassName("Timeout")}},
					{Action: worker.ActionPause},
				},
			})

		require.JSONEq(t, `{
			"steps": [
				{"name": "a", "wait": 90, "skip_if": "condition",
				 "on_exception": {"action": "reattempt", "wait": 0.5, "max_reattempts": null,
				                  "terminal_action": "skip", "report": "terminal_only"}},
				{"name": "b", "skip_if": true,
				 "on_exception": [{"action": "reattempt", "matching": ["Timeout"]}, {"action": "pause"}]}
			],
			"on_exception": [
				{"action": "cancel", "matching": ["*net.OpError"]},
				{"handler": "handler:workflow[1]", "report": "never"}
			],
			"may_proceed_without_hero": true,
			"cancel_if": ["closed"]
		}`, string(mustDefinition(t, wf)))
	})

	t.Run("ReportsMistakes", func(t *testing.T) {
		t.Parallel()
		for name, wf := range map[string]*worker.Workflow{
			"duplicate":        worker.NewWorkflow("W", nil).Step("a", ok, nil).Step("a", ok, nil),
			"unknown after":    worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{After: "nope"}),
			"unknown before":   worker.NewWorkflow("W", nil).Step("a", ok, nil).Step("b", ok, &worker.StepOpts{Before: "later"}).Step("later", ok, nil),
			"before and after": worker.NewWorkflow("W", nil).Step("a", ok, nil).Step("b", ok, &worker.StepOpts{Before: "a", After: "a"}),
			"no function":      worker.NewWorkflow("W", nil).Step("a", nil, nil),
			"both policies": worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{
				OnException: &worker.ExceptionPolicy{Action: worker.ActionSkip}, OnExceptionList: []worker.ExceptionPolicy{{Action: worker.ActionSkip}},
			}),
			"negative wait": worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{Wait: -time.Second}),
			"no type":       worker.NewWorkflow("", nil).Step("a", ok, nil),
		} {
			require.Error(t, wf.Validate(), name)
			_, err := wf.Definition()
			require.Error(t, err, name)
			_, err = worker.New(nil, &worker.Config{Workflows: []*worker.Workflow{wf}})
			require.Error(t, err, name)
		}
	})

	t.Run("RegistrationRefusesWhatSQLRefuses", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w, err := worker.New(b.pool, &worker.Config{Workflows: []*worker.Workflow{
			worker.NewWorkflow("Bad", nil).Step("a", ok, &worker.StepOpts{
				OnException: &worker.ExceptionPolicy{Action: worker.ActionPause, MaxReattempts: 3},
			}),
		}})
		require.NoError(t, err)

		err = w.Start(b.ctx)

		require.ErrorContains(t, err, "registering workflow Bad")
		require.ErrorContains(t, err, "max_reattempts")
	})
}
