package worker_test

// What the worker does with user code that misbehaves (odd flow-control
// values, errors that panic when printed, hooks that skip or panic,
// conditions that return flow control) and with definitions that differ
// between the worker and the database (a deploy in progress). Each case
// asserts the rows it leaves.

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// nilPointerError panics when a nil one is printed.
type nilPointerError struct{ msg string }

func (e *nilPointerError) Error() string { return e.msg }

// quietHarness runs workflows inline with the given hooks and a logger that
// drops everything (the cases below log errors on purpose).
func quietHarness(t *testing.T, hooks []worker.Hook, workflows ...*worker.Workflow) *workertest.Harness {
	t.Helper()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	return workertest.New(t, conn, &worker.Config{
		Workflows:     workflows,
		Hooks:         hooks,
		Logger:        slog.New(slog.DiscardHandler),
		ErrorReporter: func(context.Context, *worker.Step, error) {},
	})
}

func TestMisbehavingStepCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("FlowControlWaitsAreSanitized", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Odd", nil).
			// a wait on a signal that takes none is dropped, not refused
			Step("a", always(&worker.FlowControl{Signal: worker.SignalSkip, Wait: time.Hour}), nil).
			// a negative wait is no wait
			Step("b", failing(worker.Reattempt(-time.Minute)), nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Odd", "User", "1")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		require.Equal(t, []string{"a: skipped_by_flow_control", "b: reattempted", "b: success"}, outcomesOf(ctx, h, id))
		history := h.History(ctx, id)
		require.Equal(t, *history[1].FinishedAt, history[2].ScheduledFor, "the reattempt was due at once")
	})

	t.Run("UnknownSignalIsAnError", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Odd", nil).
			Step("a", always(&worker.FlowControl{Signal: "explode"}), nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Odd", "User", "1")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StatePaused)
		execution := h.History(ctx, id)[0]
		require.Equal(t, goclient.OutcomePausedByException, *execution.Outcome)
		require.Contains(t, *execution.ErrorMessage, `unknown signal "explode"`)
	})

	t.Run("ErrorThatPanicsWhenPrinted", func(t *testing.T) {
		t.Parallel()
		var typedNil *nilPointerError
		wf := worker.NewWorkflow("Odd", nil).Step("a", always(typedNil), nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Odd", "User", "1")

		h.Speedrun(ctx, id, nil)

		execution := h.History(ctx, id)[0]
		require.Equal(t, goclient.OutcomePausedByException, *execution.Outcome)
		require.Equal(t, "*worker_test.nilPointerError", *execution.ErrorClassName)
		require.Contains(t, *execution.ErrorMessage, "panic while printing the error")
	})

	t.Run("ErrorIsNil", func(t *testing.T) {
		t.Parallel()
		matcher := worker.ErrorIs(nil)
		require.Equal(t, "<nil>", matcher.MatcherName())
		require.False(t, matcher.MatchError(errors.New("x")))
	})
}

func TestMisbehavingHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	skipping := func(skipped worker.HookEvent) worker.Hook {
		return func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
			if event == skipped {
				return nil
			}
			return next(ctx)
		}
	}

	t.Run("StepHookThatDoesNotCallNextFailsTheStep", func(t *testing.T) {
		t.Parallel()
		var ran atomic.Bool
		wf := worker.NewWorkflow("Hooked", nil).Step("a", func(context.Context, *worker.Step) error {
			ran.Store(true)
			return nil
		}, nil)
		h := quietHarness(t, []worker.Hook{skipping(worker.EventStep)}, wf)
		id := h.Create(ctx, "Hooked", "User", "1")

		h.Speedrun(ctx, id, nil)

		require.False(t, ran.Load())
		execution := h.History(ctx, id)[0]
		require.Equal(t, goclient.OutcomePausedByException, *execution.Outcome)
		require.Contains(t, *execution.ErrorMessage, "a hook did not run the step")
	})

	for _, event := range []worker.HookEvent{worker.EventPreconditions, worker.EventFinalize} {
		t.Run("HookThatDoesNotCallNextOn_"+string(event), func(t *testing.T) {
			t.Parallel()
			wf := worker.NewWorkflow("Hooked", nil).Step("a", ok, nil).Step("b", ok, nil)
			h := quietHarness(t, []worker.Hook{skipping(event)}, wf)
			id := h.Create(ctx, "Hooked", "User", "1")

			h.Speedrun(ctx, id, nil)

			h.AssertWorkflowState(ctx, id, goclient.StateFinished)
			require.Equal(t, []string{"a: success", "b: success"}, outcomesOf(ctx, h, id), "the executor ran the event itself")
		})
	}

	t.Run("HookPanics", func(t *testing.T) {
		t.Parallel()
		var outcomes []goclient.Outcome
		panicking := func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
			err := next(ctx)
			if event == worker.EventFinalize {
				outcomes = append(outcomes, step.Outcome)
				panic("instrumentation bug")
			}
			if event == worker.EventPreconditions {
				panic("instrumentation bug")
			}
			return err
		}
		wf := worker.NewWorkflow("Hooked", nil).Step("a", ok, nil)
		h := quietHarness(t, []worker.Hook{panicking}, wf)
		id := h.Create(ctx, "Hooked", "User", "1")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		require.Equal(t, []goclient.Outcome{goclient.OutcomeSuccess}, outcomes)
	})
}

func TestConditions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	yes := func(context.Context, *worker.Step) (bool, error) { return true, nil }
	returns := func(err error) worker.Condition {
		return func(context.Context, *worker.Step) (bool, error) { return false, err }
	}

	t.Run("HeroMissingButMayProceedStillChecksCancelIf", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Orphan", &worker.WorkflowOpts{MayProceedWithoutHero: true, HeroMissing: yes}).
			CancelIf("closed", yes).
			Step("a", ok, nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Orphan", "User", "1")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, []string{"a: canceled_by_condition"}, outcomesOf(ctx, h, id))
	})

	t.Run("HeroMissingButMayProceedTellsTheStep", func(t *testing.T) {
		t.Parallel()
		var heroMissing atomic.Bool
		wf := worker.NewWorkflow("Orphan", &worker.WorkflowOpts{MayProceedWithoutHero: true, HeroMissing: yes}).
			Step("a", func(ctx context.Context, step *worker.Step) error {
				heroMissing.Store(step.HeroMissing)
				return nil
			}, nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Orphan", "User", "1")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, []string{"a: success"}, outcomesOf(ctx, h, id))
		require.True(t, heroMissing.Load())
	})

	t.Run("ConditionsMayReturnCancelOrSkip", func(t *testing.T) {
		t.Parallel()
		skipping := worker.NewWorkflow("SkipFromCancelIf", nil).
			CancelIf("maybe", returns(worker.Skip())).
			Step("a", ok, nil)
		canceling := worker.NewWorkflow("CancelFromSkipIf", nil).
			Step("a", ok, &worker.StepOpts{SkipIf: returns(worker.Cancel())})
		h := quietHarness(t, nil, skipping, canceling)
		skipped := h.Create(ctx, "SkipFromCancelIf", "User", "1")
		canceled := h.Create(ctx, "CancelFromSkipIf", "User", "1")

		h.Speedrun(ctx, skipped, nil)
		h.Speedrun(ctx, canceled, nil)

		require.Equal(t, []string{"a: skipped_by_condition"}, outcomesOf(ctx, h, skipped))
		require.Equal(t, []string{"a: canceled_by_condition"}, outcomesOf(ctx, h, canceled))
		h.AssertWorkflowState(ctx, canceled, goclient.StateCanceled)
	})

	t.Run("OtherFlowControlFromAConditionIsAnError", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Confused", nil).
			CancelIf("confused", returns(worker.Finished())).
			Step("a", ok, nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Confused", "User", "1")

		h.Speedrun(ctx, id, nil)

		execution := h.History(ctx, id)[0]
		require.Equal(t, goclient.OutcomePausedByException, *execution.Outcome)
		require.Equal(t, "*worker.ConditionError", *execution.ErrorClassName)
		require.True(t, strings.HasPrefix(*execution.ErrorMessage, "cancel_if confused: "), *execution.ErrorMessage)
	})
}

func TestDefinitionsDiffer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("StepOnlyTheDatabaseDefinesIsLeftForANewerWorker", func(t *testing.T) {
		t.Parallel()
		newer := worker.NewWorkflow("Deploy", nil).Step("a", ok, nil).Step("b", ok, nil)
		h := quietHarness(t, nil, newer)
		id := h.Create(ctx, "Deploy", "User", "1")
		h.PerformNextStep(ctx, id)

		older, err := worker.NewRunner(&worker.Config{
			Workflows: []*worker.Workflow{worker.NewWorkflow("Deploy", nil).Step("a", ok, nil)},
			Logger:    slog.New(slog.DiscardHandler),
		})
		require.NoError(t, err)
		unknown, err := worker.NewRunner(&worker.Config{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)

		b := h.History(ctx, id)[1]
		for _, runner := range []*worker.Runner{older, unknown} {
			var notHere *worker.NotHereError
			require.ErrorAs(t, runner.Perform(ctx, h.Conn(), b.ID), &notHere)
			require.Equal(t, "b", notHere.StepName)
		}
		require.Equal(t, goclient.ExecutionScheduled, h.History(ctx, id)[1].State, "nothing recorded")

		h.Speedrun(ctx, id, nil)
		require.Equal(t, []string{"a: success", "b: success"}, outcomesOf(ctx, h, id))
	})

	t.Run("RegistrySnapshotsTheWorkflow", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Snapshot", nil).Step("a", ok, nil)
		runner, err := worker.NewRunner(&worker.Config{Workflows: []*worker.Workflow{wf}})
		require.NoError(t, err)
		wf.Step("added_later", ok, nil)

		conn := dbtest.NewConn(t, dbtest.NewConfig(t))
		require.NoError(t, runner.Register(ctx, conn))
		client := protocol.New(conn)
		for name, want := range map[string]bool{"a": true, "added_later": false} {
			defined, err := client.StepDefined(ctx, "Snapshot", name)
			require.NoError(t, err)
			require.Equal(t, want, defined, name)
		}
	})
}

func TestWorkerRobustness(t *testing.T) {
	t.Parallel()

	t.Run("CancelingStartsContextDoesNotStopTheWorker", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wf := worker.NewWorkflow("Steady", nil).Step("a", ok, nil).Step("b", ok, nil)
		w, err := worker.New(b.workerPool, &worker.Config{Workflows: []*worker.Workflow{wf}, River: fastRiver()})
		require.NoError(t, err)
		startCtx, cancel := context.WithCancel(b.ctx)
		require.NoError(t, w.Start(startCtx))
		cancel()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, w.Stop(ctx))
		})

		id := b.create(t, "Steady")
		b.waitState(t, id, "finished")
		require.Equal(t, []string{"a: success", "b: success"}, b.outcomes(t, id))
	})

	t.Run("HeartbeatsKeepALongStepAlive", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wf := worker.NewWorkflow("Long", nil).Step("a", func(ctx context.Context, step *worker.Step) error {
			// wait for a heartbeat to move updated_at past started_at
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				var beat bool
				err := b.pool.QueryRow(ctx, "select updated_at > started_at from geneva.step_executions where id = $1",
					step.ExecutionID).Scan(&beat)
				if err != nil {
					return err
				}
				if beat {
					return nil
				}
				time.Sleep(10 * time.Millisecond)
			}
			return errors.New("no heartbeat")
		}, nil)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}, HeartbeatInterval: 20 * time.Millisecond})

		id := b.create(t, "Long")
		b.waitState(t, id, "finished", "paused")
		require.Equal(t, []string{"a: success"}, b.outcomes(t, id))
	})

	t.Run("ConfigMistakes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wf := worker.NewWorkflow("Any", nil).Step("a", ok, nil)
		for name, config := range map[string]*worker.Config{
			"negative housekeeping interval": {Housekeeping: worker.HousekeepingConfig{Interval: -time.Second}},
			"negative heartbeat":             {HeartbeatInterval: -time.Second},
			"negative step timeout":          {StepTimeout: -time.Second},
			"negative max workers":           {MaxWorkers: -1},
			"nil workflow":                   {Workflows: []*worker.Workflow{nil}},
		} {
			if config.Workflows == nil {
				config.Workflows = []*worker.Workflow{wf}
			}
			_, err := worker.New(b.workerPool, config)
			require.Error(t, err, name)
		}

		// the caller's periodic jobs are copied, not appended to in place
		jobs := make([]*river.PeriodicJob, 0, 4)
		_, err := worker.New(b.workerPool, &worker.Config{Workflows: []*worker.Workflow{wf}, River: &river.Config{PeriodicJobs: jobs}})
		require.NoError(t, err)
		require.Nil(t, jobs[:1][0])
	})
}
