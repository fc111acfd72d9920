package worker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/peterldowns/pgtestdb"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testBundle is one test's database. The worker runs as a member of
// geneva_worker and the client as a member of geneva_operator, with no more
// privilege than those roles; pool is the owner's, for looking at the tables.
type testBundle struct {
	ctx        context.Context
	pool       *pgxpool.Pool
	workerPool *pgxpool.Pool
	client     *goclient.Client
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b, _ := setupWithConfig(t)
	return b
}

// setupWithConfig is setup, with its database's config (for a test that
// starts a worker child on it: startChild).
func setupWithConfig(t *testing.T) (*testBundle, *pgtestdb.Config) {
	t.Helper()
	conf := dbtest.NewConfig(t)
	return &testBundle{
		ctx:        context.Background(),
		pool:       dbtest.NewPoolConfig(t, conf),
		workerPool: dbtest.NewPoolAs(t, conf, dbtest.Worker),
		client:     goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Operator)),
	}, conf
}

// start runs a worker for the workflows until the test ends.
func (b *testBundle) start(t *testing.T, config *worker.Config) *worker.Worker {
	t.Helper()
	return b.startWith(t, config, nil)
}

// startWith starts a worker as start does, calling seams (export_test.go's
// setters, such as the test signals) between New and Start.
func (b *testBundle) startWith(t *testing.T, config *worker.Config, seams func(*worker.Worker)) *worker.Worker {
	t.Helper()
	if config.River == nil {
		config.River = fastRiver()
	}
	w, err := worker.New(b.workerPool, config)
	require.NoError(t, err)
	if seams != nil {
		seams(w)
	}
	require.NoError(t, w.Start(b.ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(ctx))
	})
	return w
}

// fastRiver makes River fetch often, for tests that wait on steps.
func fastRiver() *river.Config {
	return &river.Config{FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond}
}

func (b *testBundle) create(t *testing.T, workflowType string) int64 {
	t.Helper()
	id, err := b.client.CreateWorkflow(b.ctx, workflowType, "User", fmt.Sprint(time.Now().UnixNano()), nil)
	require.NoError(t, err)
	return id
}

// waitState waits until the workflow is in one of the states.
func (b *testBundle) waitState(t *testing.T, id int64, states ...goclient.WorkflowState) *goclient.Workflow {
	t.Helper()
	var workflow *goclient.Workflow
	require.Eventually(t, func() bool {
		var err error
		workflow, err = b.client.GetWorkflow(b.ctx, id)
		require.NoError(t, err)
		return slices.Contains(states, workflow.State)
	}, 15*time.Second, 10*time.Millisecond, "workflow %d never became %v", id, states)
	return workflow
}

// outcomes lists "step: outcome" for each execution of the workflow.
func (b *testBundle) outcomes(t *testing.T, id int64) []string {
	t.Helper()
	history, err := b.client.StepHistory(b.ctx, id)
	require.NoError(t, err)
	var outcomes []string
	for _, e := range history {
		outcome := string(e.State)
		if e.Outcome != nil {
			outcome = string(*e.Outcome)
		}
		outcomes = append(outcomes, e.StepName+": "+outcome)
	}
	return outcomes
}

func (b *testBundle) history(t *testing.T, id int64) []*goclient.StepExecution {
	t.Helper()
	history, err := b.client.StepHistory(b.ctx, id)
	require.NoError(t, err)
	return history
}

func ok(ctx context.Context, step *worker.Step) error { return nil }

// returning makes a step that returns the errors in turn, then nil.
func returning(errs ...error) worker.StepFunc {
	var calls atomic.Int32
	return func(ctx context.Context, step *worker.Step) error {
		n := int(calls.Add(1)) - 1
		if n < len(errs) {
			return errs[n]
		}
		return nil
	}
}

var errSentinel = errors.New("gateway said no")

type rateLimitError struct{ wait time.Duration }

func (e *rateLimitError) Error() string { return "rate limited" }

func TestWorker(t *testing.T) {
	t.Parallel()

	t.Run("RecordsEverySignal", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wf := func(name string, step worker.StepFunc) *worker.Workflow {
			return worker.NewWorkflow(name, nil).Step("first", step, nil).Step("second", ok, nil)
		}
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{
			wf("Success", ok),
			wf("Finished", returning(worker.Finished())),
			wf("Reattempt", returning(worker.Reattempt(50*time.Millisecond))),
			wf("Skip", returning(worker.Skip())),
			wf("Cancel", returning(worker.Cancel())),
			wf("Pause", returning(worker.Pause())),
			wf("Wrapped", returning(fmt.Errorf("deciding: %w", worker.Cancel()))),
		}})

		cases := []struct {
			workflowType string
			state        goclient.WorkflowState
			outcomes     []string
		}{
			{"Success", "finished", []string{"first: success", "second: success"}},
			{"Finished", "finished", []string{"first: success"}},
			{"Reattempt", "finished", []string{"first: reattempted", "first: success", "second: success"}},
			{"Skip", "finished", []string{"first: skipped_by_flow_control", "second: success"}},
			{"Cancel", "canceled", []string{"first: canceled_by_flow_control"}},
			{"Pause", "paused", []string{"first: paused_by_flow_control"}},
			{"Wrapped", "canceled", []string{"first: canceled_by_flow_control"}},
		}
		ids := map[string]int64{}
		for _, c := range cases {
			ids[c.workflowType] = b.create(t, c.workflowType)
		}
		for _, c := range cases {
			b.waitState(t, ids[c.workflowType], c.state)
			require.Equal(t, c.outcomes, b.outcomes(t, ids[c.workflowType]), c.workflowType)
		}

		// a paused workflow resumes with the same step
		_, err := b.client.ResumeWorkflow(b.ctx, ids["Pause"])
		require.NoError(t, err)
		b.waitState(t, ids["Pause"], "finished")
		require.Equal(t, []string{"first: paused_by_flow_control", "first: success", "second: success"}, b.outcomes(t, ids["Pause"]))
	})

	t.Run("RecordsErrorsAndPanics", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.start(t, &worker.Config{
			Workflows: []*worker.Workflow{
				worker.NewWorkflow("Plain", nil).Step("a", returning(errors.New("boom")), nil),
				worker.NewWorkflow("Wrapped", nil).Step("a", returning(fmt.Errorf("charging: %w", errSentinel)), nil),
				worker.NewWorkflow("Joined", nil).Step("a", returning(errors.Join(errSentinel, &rateLimitError{})), nil),
				worker.NewWorkflow("Panics", nil).Step("a", func(ctx context.Context, step *worker.Step) error {
					panic("the sky fell")
				}, nil),
			},
			ErrorReporter: func(ctx context.Context, step *worker.Step, err error) {},
		})

		for _, c := range []struct {
			workflowType string
			class        string
			classes      []any
			message      string
		}{
			{"Plain", "*errors.errorString", []any{"*errors.errorString"}, "boom"},
			{"Wrapped", "*errors.errorString", []any{"*fmt.wrapError", "*errors.errorString"}, "charging: gateway said no"},
			{"Joined", "*errors.errorString", []any{"*errors.joinError", "*errors.errorString", "*worker_test.rateLimitError"}, "gateway said no\nrate limited"},
			{"Panics", "*worker.PanicError", []any{"*worker.PanicError"}, "panic: the sky fell"},
		} {
			id := b.create(t, c.workflowType)
			b.waitState(t, id, "paused")
			execution := b.history(t, id)[0]
			require.Equal(t, goclient.OutcomePausedByException, *execution.Outcome, c.workflowType)
			require.Equal(t, c.class, *execution.ErrorClassName, c.workflowType, "the most specific class, through the wrappers")
			require.Equal(t, c.classes, execution.Metadata["error_classes"], c.workflowType)
			require.Equal(t, c.message, *execution.ErrorMessage, c.workflowType)
			if c.workflowType == "Panics" {
				require.Contains(t, *execution.ErrorBacktrace, "worker_test.go", "the panic's stack")
			}
		}
	})

	t.Run("PoliciesMatchByMatcherName", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{
			worker.NewWorkflow("Policies", nil).
				OnException(worker.ExceptionPolicy{Action: worker.ActionSkip, Matching: []worker.Matcher{worker.ErrorIs(errSentinel)}}).
				OnException(worker.ExceptionPolicy{Action: worker.ActionCancel, Matching: []worker.Matcher{worker.ErrorAs[*rateLimitError]()}}).
				Step("sentinel", returning(fmt.Errorf("wrapped: %w", errSentinel)), nil).
				Step("typed", returning(&rateLimitError{}), nil),
		}})

		id := b.create(t, "Policies")
		b.waitState(t, id, "canceled")

		require.Equal(t, []string{"sentinel: skipped_by_exception", "typed: canceled_by_exception"}, b.outcomes(t, id))
		history := b.history(t, id)
		require.Contains(t, history[0].Metadata["error_classes"], "gateway said no", "the ErrorIs matcher's name")
		require.Contains(t, history[1].Metadata["error_classes"], "*worker_test.rateLimitError")
	})

	t.Run("ReattemptPolicyWithCapAndReport", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var reported []string
		var mu sync.Mutex
		b.start(t, &worker.Config{
			Workflows: []*worker.Workflow{
				worker.NewWorkflow("Flaky", nil).Step("a", func(ctx context.Context, step *worker.Step) error {
					return fmt.Errorf("attempt %d failed", step.Attempt)
				}, &worker.StepOpts{OnException: &worker.ExceptionPolicy{
					Action: worker.ActionReattempt, Wait: 10 * time.Millisecond, MaxReattempts: 2,
					TerminalAction: worker.ActionCancel, Report: worker.ReportTerminalOnly,
				}}),
			},
			ErrorReporter: func(ctx context.Context, step *worker.Step, err error) {
				mu.Lock()
				defer mu.Unlock()
				reported = append(reported, err.Error())
			},
		})

		id := b.create(t, "Flaky")
		b.waitState(t, id, "canceled")

		require.Equal(t, []string{"a: reattempted_by_exception", "a: reattempted_by_exception", "a: reattempts_exhausted"}, b.outcomes(t, id))
		// (the worker reports after the outcome commits: the workflow may be
		// canceled a moment before the reporter has run)
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(reported) > 0
		}, 10*time.Second, 5*time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"attempt 3 failed"}, reported, "terminal_only reports when reattempts run out")
	})

	t.Run("HandlerDecides", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{
			worker.NewWorkflow("Handled", nil).
				OnException(worker.ExceptionPolicy{Handler: func(ctx context.Context, step *worker.Step, err error) error {
					var limited *rateLimitError
					if errors.As(err, &limited) {
						return worker.Reattempt(limited.wait)
					}
					return nil // pauses
				}}).
				Step("a", returning(&rateLimitError{wait: 20 * time.Millisecond}, errors.New("unexpected")), nil),
		}})

		id := b.create(t, "Handled")
		b.waitState(t, id, "paused")

		require.Equal(t, []string{"a: reattempted_by_exception", "a: paused_by_exception"}, b.outcomes(t, id))
	})

	t.Run("ConditionsRunBeforeStart", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var closed atomic.Bool
		var ran atomic.Int32
		count := func(ctx context.Context, step *worker.Step) error { ran.Add(1); return nil }
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{
			worker.NewWorkflow("Conditional", nil).
				CancelIf("closed", func(ctx context.Context, step *worker.Step) (bool, error) { return closed.Load(), nil }).
				Step("a", count, &worker.StepOpts{SkipIf: func(ctx context.Context, step *worker.Step) (bool, error) {
					return step.Attempt == 0 && step.HeroType == "User", nil // conditions see the job's facts
				}}).
				Step("b", count, &worker.StepOpts{Skip: true}).
				Step("c", func(ctx context.Context, step *worker.Step) error {
					closed.Store(true)
					return worker.Reattempt(0)
				}, nil),
			worker.NewWorkflow("Orphan", &worker.WorkflowOpts{
				HeroMissing: func(ctx context.Context, step *worker.Step) (bool, error) { return true, nil },
			}).Step("a", count, nil),
			worker.NewWorkflow("BrokenCondition", nil).
				Step("a", count, &worker.StepOpts{
					SkipIf: func(ctx context.Context, step *worker.Step) (bool, error) {
						return false, errors.New("cannot tell")
					},
					OnException: &worker.ExceptionPolicy{Action: worker.ActionCancel},
				}),
		}})

		conditional := b.create(t, "Conditional")
		orphan := b.create(t, "Orphan")
		broken := b.create(t, "BrokenCondition")
		b.waitState(t, conditional, "canceled")
		b.waitState(t, orphan, "canceled")
		b.waitState(t, broken, "canceled")

		require.Equal(t, []string{
			"a: skipped_by_condition", "b: skipped_by_condition", "c: reattempted", "c: canceled_by_condition",
		}, b.outcomes(t, conditional))
		require.Equal(t, []string{"a: canceled_hero_missing"}, b.outcomes(t, orphan))
		require.Equal(t, []string{"a: canceled_by_exception"}, b.outcomes(t, broken))
		require.Nil(t, b.history(t, broken)[0].StartedAt, "a precondition's error ends the execution before it starts")
		require.Zero(t, ran.Load(), "no step function ran")
	})

	t.Run("HonoursWaits", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{
			worker.NewWorkflow("Waiting", nil).Step("a", ok, nil).Step("b", ok, &worker.StepOpts{Wait: 300 * time.Millisecond}),
		}})

		id := b.create(t, "Waiting")
		b.waitState(t, id, "finished")

		history := b.history(t, id)
		require.GreaterOrEqual(t, history[1].StartedAt.Sub(*history[0].FinishedAt), 300*time.Millisecond)
	})

	t.Run("RunsJobDeliveredTwiceOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var runs atomic.Int32
		wf := worker.NewWorkflow("Once", nil).Step("a", func(ctx context.Context, step *worker.Step) error {
			runs.Add(1)
			time.Sleep(50 * time.Millisecond)
			return nil
		}, nil)
		// the worker registers the definition when it starts; here the
		// workflow is created first
		require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "Once", mustDefinition(t, wf)))
		id := b.create(t, "Once")
		// River delivers the job twice: a copy of it waits too
		for range 2 {
			_, err := b.pool.Exec(b.ctx, `insert into public.river_job (args, kind, max_attempts, queue, state)
				select args, kind, max_attempts, queue, 'available' from public.river_job
				where (args->>'workflow_id')::bigint = $1 limit 1`, id)
			require.NoError(t, err)
		}

		b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}, MaxWorkers: 4})
		b.waitState(t, id, "finished")
		require.Eventually(t, func() bool {
			var waiting int
			require.NoError(t, b.pool.QueryRow(b.ctx, `select count(*) from public.river_job
				where (args->>'workflow_id')::bigint = $1 and state <> 'completed'`, id).Scan(&waiting))
			return waiting == 0
		}, 10*time.Second, 10*time.Millisecond, "every copy of the job completes")

		require.EqualValues(t, 1, runs.Load())
		require.Equal(t, []string{"a: success"}, b.outcomes(t, id))
	})

	t.Run("HousekeepingRecoversStuckSteps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wf := worker.NewWorkflow("Stuck", nil).Step("a", ok, nil)
		require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "Stuck", mustDefinition(t, wf)))
		// a worker that died two hours ago started step a
		conn, err := pgx.ConnectConfig(b.ctx, b.pool.Config().ConnConfig)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close(b.ctx) })
		_, err = conn.Exec(b.ctx, "select set_config('geneva.fake_now', (now() - interval '2 hours')::text, false)")
		require.NoError(t, err)
		twoHoursAgo := goclient.New(conn)
		id, err := twoHoursAgo.CreateWorkflow(b.ctx, "Stuck", "User", "1", nil)
		require.NoError(t, err)
		started, err := protocol.New(conn).StartStep(b.ctx, b.history(t, id)[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		require.NotNil(t, started)

		// rounds a second apart: a first round that fails or finds nothing
		// on a busy machine is followed by another within the wait
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}, Housekeeping: worker.HousekeepingConfig{Interval: time.Second}})
		defer func() {
			if t.Failed() {
				var dump string
				_ = b.pool.QueryRow(b.ctx, `select concat_ws(E'\n',
				  (select string_agg(to_jsonb(e)::text, E'\n') from geneva.step_executions e),
				  (select string_agg(to_jsonb(r)::text, E'\n') from geneva.housekeeping_rounds r),
				  (select string_agg(to_jsonb(j)::text, E'\n') from river_job j),
				  now()::text)`).Scan(&dump)
				t.Log(dump)
			}
		}()
		b.waitState(t, id, "finished")

		require.Equal(t, []string{"a: recovered", "a: success"}, b.outcomes(t, id))
		require.Equal(t, "stuck_in_progress", b.history(t, id)[0].Metadata["recovery_reason"])
	})

	t.Run("HooksWrapEveryEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var (
			mu     sync.Mutex
			events []string
		)
		hook := func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
			mu.Lock()
			events = append(events, "before "+string(event)+" "+step.Name)
			mu.Unlock()
			err := next(ctx)
			mu.Lock()
			events = append(events, fmt.Sprintf("after %s %s %s %s", event, step.Name, step.Outcome, step.WorkflowState))
			mu.Unlock()
			return err
		}
		b.start(t, &worker.Config{
			Workflows: []*worker.Workflow{worker.NewWorkflow("Hooked", nil).Step("a", ok, nil)},
			Hooks:     []worker.Hook{hook},
		})

		id := b.create(t, "Hooked")
		b.waitState(t, id, "finished")

		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(events) == 6 }, 5*time.Second, 10*time.Millisecond)
		require.Equal(t, []string{
			"before preconditions a", "after preconditions a  ",
			"before step a", "after step a  ",
			"before finalize a", "after finalize a success finished",
		}, events)
	})
}

func mustDefinition(t *testing.T, wf *worker.Workflow) []byte {
	t.Helper()
	definition, err := wf.Definition()
	require.NoError(t, err)
	return definition
}

// waitSignal receives from a test signal (export_test.go) until a value
// satisfies ok, and returns it; it fails the test when none has within.
func waitSignal[T any](t *testing.T, signal <-chan T, within time.Duration, ok func(T) bool, what string) T {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case v := <-signal:
			if ok(v) {
				return v
			}
		case <-timeout:
			require.FailNow(t, "no signal within "+within.String(), what)
		}
	}
}
