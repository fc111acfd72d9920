package worker_test

// The worker runs a workflow's next step in the same River job when SQL
// starts it (Config.InlineSteps, geneva.complete_and_continue).

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

// jobIDs lists "step: job" for the workflow's executions, "-" for none.
func (b *testBundle) jobIDs(t *testing.T, id int64) []string {
	t.Helper()
	var jobs []string
	for _, e := range b.history(t, id) {
		job := "-"
		if e.JobID != nil {
			job = "job"
		}
		jobs = append(jobs, e.StepName+": "+job)
	}
	return jobs
}

func fourSteps(workflowType string, opts *worker.WorkflowOpts) *worker.Workflow {
	return worker.NewWorkflow(workflowType, opts).Step("a", ok, nil).Step("b", ok, nil).Step("c", ok, nil).Step("d", ok, nil)
}

func TestInlineSteps(t *testing.T) {
	t.Parallel()

	t.Run("NextStepsRunInTheSameJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var (
			mu     sync.Mutex
			events []string
		)
		hook := func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
			err := next(ctx)
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprintf("%s %s %s", step.Name, event, step.Outcome))
			return err
		}
		wf := worker.NewWorkflow("Quick", nil).
			Step("a", ok, nil).Step("b", ok, nil).Step("c", ok, &worker.StepOpts{Wait: time.Millisecond}).Step("d", ok, nil)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}, Hooks: []worker.Hook{hook}})

		id := b.create(t, "Quick")
		b.waitState(t, id, "finished")

		require.Equal(t, []string{"a: success", "b: success", "c: success", "d: success"}, b.outcomes(t, id))
		require.Equal(t, []string{"a: job", "b: -", "c: job", "d: -"}, b.jobIDs(t, id), "c waits, so it gets a job")
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{
			"a preconditions ", "a step ", "a finalize success",
			"b preconditions ", "b step ", "b finalize success",
			"c preconditions ", "c step ", "c finalize success",
			"d preconditions ", "d step ", "d finalize success",
		}, events, "every step gets its events")
	})

	t.Run("InlineStepsCapsARun", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{fourSteps("Quick", nil)}, InlineSteps: 1})

		id := b.create(t, "Quick")
		b.waitState(t, id, "finished")

		require.Equal(t, []string{"a: job", "b: -", "c: job", "d: -"}, b.jobIDs(t, id))
	})

	t.Run("Off", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{fourSteps("Quick", nil)}, InlineSteps: -1})

		id := b.create(t, "Quick")
		b.waitState(t, id, "finished")

		require.Equal(t, []string{"a: job", "b: job", "c: job", "d: job"}, b.jobIDs(t, id))
	})

	t.Run("NeverWithAHeroCheck", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		present := func(context.Context, *worker.Step) (bool, error) { return false, nil }
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{fourSteps("Checked", &worker.WorkflowOpts{HeroMissing: present})}})

		id := b.create(t, "Checked")
		b.waitState(t, id, "finished")

		require.Equal(t, []string{"a: job", "b: job", "c: job", "d: job"}, b.jobIDs(t, id))
	})

	t.Run("NeverWithAHeroLoader", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var loads atomic.Int32
		load := func(context.Context, *worker.Step) (any, error) { loads.Add(1); return "hero", nil }
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{fourSteps("Loaded", &worker.WorkflowOpts{LoadHero: load})}})

		id := b.create(t, "Loaded")
		b.waitState(t, id, "finished")

		require.Equal(t, []string{"a: job", "b: job", "c: job", "d: job"}, b.jobIDs(t, id))
		require.Equal(t, int32(4), loads.Load(), "loaded before each step")
	})

	t.Run("TypeHooksWrapInlineSteps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var (
			mu     sync.Mutex
			events []string
		)
		hook := func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
			mu.Lock()
			events = append(events, fmt.Sprintf("%s %s", step.Name, event))
			mu.Unlock()
			return next(ctx)
		}
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{fourSteps("Hooked", &worker.WorkflowOpts{Hooks: []worker.Hook{hook}})}})

		id := b.create(t, "Hooked")
		b.waitState(t, id, "finished")

		require.Equal(t, []string{"a: job", "b: -", "c: -", "d: -"}, b.jobIDs(t, id))
		mu.Lock()
		defer mu.Unlock()
		var want []string
		for _, step := range []string{"a", "b", "c", "d"} {
			want = append(want, step+" preconditions", step+" step", step+" finalize")
		}
		require.Equal(t, want, events)
	})

	t.Run("HardStopGivesBackAnInlineStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		started := make(chan struct{})
		wf := worker.NewWorkflow("Blocking", nil).
			Step("a", ok, nil).
			Step("b", func(ctx context.Context, step *worker.Step) error {
				close(started)
				<-ctx.Done()
				return ctx.Err()
			}, nil)
		w, err := worker.New(b.workerPool, &worker.Config{Workflows: []*worker.Workflow{wf}, River: fastRiver()})
		require.NoError(t, err)
		require.NoError(t, w.Start(b.ctx))
		id := b.create(t, "Blocking")
		<-started

		ctx, cancel := context.WithTimeout(b.ctx, 100*time.Millisecond)
		defer cancel()
		require.NoError(t, w.Stop(ctx))

		require.Equal(t, []string{"a: success", "b: recovered", "b: scheduled"}, b.outcomes(t, id))
		require.Equal(t, []string{"a: job", "b: -", "b: job"}, b.jobIDs(t, id), "given back with a job of its own")
	})

	t.Run("OperatorRequestDuringAChainStopsIt", func(t *testing.T) {
		t.Parallel()
		for _, request := range []string{"pause", "cancel"} {
			t.Run(request, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				running, release := make(chan struct{}), make(chan struct{})
				wf := worker.NewWorkflow("Held", nil).
					Step("a", ok, nil).
					Step("b", func(ctx context.Context, step *worker.Step) error {
						close(running)
						<-release
						return nil
					}, nil).
					Step("c", ok, nil)
				b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}})
				id := b.create(t, "Held")
				<-running // b runs inline, after a

				var err error
				if request == "pause" {
					_, err = b.client.PauseWorkflow(b.ctx, id)
				} else {
					_, err = b.client.CancelWorkflow(b.ctx, id)
				}
				require.NoError(t, err)
				close(release)

				if request == "pause" {
					b.waitState(t, id, goclient.StatePaused)
					require.Equal(t, []string{"a: success", "b: success", "c: scheduled"}, b.outcomes(t, id), "c is kept, not run")
					require.Equal(t, []string{"a: job", "b: -", "c: -"}, b.jobIDs(t, id))
					_, err = b.client.ResumeWorkflow(b.ctx, id)
					require.NoError(t, err)
					b.waitState(t, id, goclient.StateFinished)
					require.Equal(t, []string{"a: success", "b: success", "c: success"}, b.outcomes(t, id))
				} else {
					b.waitState(t, id, goclient.StateCanceled)
					require.Equal(t, []string{"a: success", "b: success", "c: canceled_externally"}, b.outcomes(t, id))
				}
			})
		}
	})

	t.Run("AChainedStepThatFailsGoesThroughItsPolicy", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var mu sync.Mutex
		tries := 0
		wf := worker.NewWorkflow("Flaky", nil).
			Step("a", ok, nil).
			Step("b", func(ctx context.Context, step *worker.Step) error {
				mu.Lock()
				defer mu.Unlock()
				if tries++; tries == 1 {
					return fmt.Errorf("flaky")
				}
				return nil
			}, &worker.StepOpts{OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt}}).
			Step("c", ok, nil)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}})

		id := b.create(t, "Flaky")
		b.waitState(t, id, goclient.StateFinished)

		require.Equal(t, []string{"a: success", "b: reattempted_by_exception", "b: success", "c: success"}, b.outcomes(t, id))
		require.Equal(t, []string{"a: job", "b: -", "b: job", "c: -"}, b.jobIDs(t, id), "a failure ends the chain; the reattempt gets a job")
	})

	t.Run("HardStopBeforeAChainedStepGivesItBackUnrun", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var (
			w     *worker.Worker
			ran   atomic.Bool
			stops = make(chan error, 1)
		)
		// b's preconditions event comes after SQL started it and before it
		// runs: stop the worker hard there and wait for the job's context
		hook := func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
			if step.Name == "b" && event == worker.EventPreconditions {
				expired, cancel := context.WithCancel(context.Background())
				cancel()
				go func() { stops <- w.Stop(expired) }()
				<-ctx.Done()
			}
			return next(ctx)
		}
		wf := worker.NewWorkflow("Stopped", nil).
			Step("a", ok, nil).
			Step("b", func(context.Context, *worker.Step) error { ran.Store(true); return nil }, nil)
		var err error
		w, err = worker.New(b.workerPool, &worker.Config{Workflows: []*worker.Workflow{wf}, Hooks: []worker.Hook{hook}, River: fastRiver()})
		require.NoError(t, err)
		require.NoError(t, w.Start(b.ctx))

		id := b.create(t, "Stopped")
		if err := <-stops; err != nil {
			t.Logf("Stop past its deadline: %v", err)
		}

		require.False(t, ran.Load(), "b never ran on the dead context")
		require.Equal(t, []string{"a: success", "b: recovered", "b: scheduled"}, b.outcomes(t, id))
		require.Equal(t, []string{"a: job", "b: -", "b: job"}, b.jobIDs(t, id), "given back with a job of its own")
	})

	t.Run("NextStepOnlyANewerWorkerDefinesIsGivenBack", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		older := worker.NewWorkflow("Deploy", nil).Step("a", ok, nil)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{older}})
		// a newer worker registers b while the older one still runs
		newer, err := worker.NewWorkflow("Deploy", nil).Step("a", ok, nil).Step("b", ok, nil).Definition()
		require.NoError(t, err)
		require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "Deploy", newer))

		id := b.create(t, "Deploy")

		require.Eventually(t, func() bool { return len(b.history(t, id)) == 3 }, 10*time.Second, 10*time.Millisecond)
		require.Equal(t, []string{"a: success", "b: recovered", "b: scheduled"}, b.outcomes(t, id))
		require.Equal(t, []string{"a: job", "b: -", "b: job"}, b.jobIDs(t, id))
		require.Equal(t, goclient.StateReady, b.waitState(t, id, goclient.StateReady).State)
	})
}
