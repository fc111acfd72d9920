package worker_test

// A transactional step (StepOpts.Transactional) writes on Step.Tx: its
// writes commit together with the record of its end, or not at all.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

// createTxRows makes the table transactional steps write to, writable by
// the worker's role.
func createTxRows(t *testing.T, b *testBundle) {
	t.Helper()
	_, err := b.pool.Exec(b.ctx, fmt.Sprintf(`
		create table tx_rows (execution_id bigint primary key, workflow_id bigint not null, attempt int not null);
		grant select, insert on tx_rows to %s`, geneva.DefaultRoles.Worker))
	require.NoError(t, err)
}

// writeRow writes the step's row on its transaction.
func writeRow(ctx context.Context, step *worker.Step) error {
	_, err := step.Tx().Exec(ctx, "insert into tx_rows values ($1, $2, $3)", step.ExecutionID, step.WorkflowID, step.Attempt)
	return err
}

// txRows lists the attempts whose rows the workflow's steps committed.
func txRows(t *testing.T, b *testBundle, id int64) []int {
	t.Helper()
	rows, err := b.pool.Query(b.ctx, "select attempt from tx_rows where workflow_id = $1 order by attempt", id)
	require.NoError(t, err)
	attempts, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	return attempts
}

// txStep is a transactional step that writes its row, then does first on
// its first attempt (returns nil on later ones).
func txStep(first func(ctx context.Context, step *worker.Step) error) worker.StepFunc {
	return func(ctx context.Context, step *worker.Step) error {
		if err := writeRow(ctx, step); err != nil {
			return err
		}
		if step.Attempt == 1 {
			return first(ctx, step)
		}
		return nil
	}
}

func TestTransactionalSteps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	createTxRows(t, b)

	reached, release := make(chan struct{}), make(chan struct{})
	reattempt := &worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 3}
	transactional := &worker.StepOpts{Transactional: true, OnException: reattempt}
	define := func(workflowType string, first func(ctx context.Context, step *worker.Step) error) *worker.Workflow {
		return worker.NewWorkflow(workflowType, nil).Step("a", txStep(first), transactional).Step("b", ok, nil)
	}
	workflows := []*worker.Workflow{
		define("TxSuccess", func(context.Context, *worker.Step) error { return nil }),
		define("TxError", func(context.Context, *worker.Step) error { return errSentinel }),
		define("TxPanic", func(context.Context, *worker.Step) error { panic("boom") }),
		define("TxTimeout", func(ctx context.Context, _ *worker.Step) error {
			<-ctx.Done()
			return ctx.Err()
		}),
		define("TxSuspend", func(context.Context, *worker.Step) error { return worker.Suspend(0) }),
		define("TxReattempt", func(context.Context, *worker.Step) error { return worker.Reattempt(0) }),
		define("TxSkip", func(context.Context, *worker.Step) error { return worker.Skip() }),
		// a statement of the step's fails and it returns nil all the same:
		// its transaction cannot commit, so it fails
		define("TxAborted", func(ctx context.Context, step *worker.Step) error {
			_ = writeRow(ctx, step) // a duplicate key
			return nil
		}),
		// the step's connection is lost before its end is recorded: it is
		// given back, and runs again
		define("TxConnLost", func(ctx context.Context, step *worker.Step) error {
			_, _ = step.Tx().Exec(ctx, "select pg_terminate_backend(pg_backend_pid())")
			return nil
		}),
		// a cursor cannot be saved in a transactional step
		define("TxCheckpoint", func(ctx context.Context, step *worker.Step) error {
			_, err := step.Checkpoint(ctx, 1)
			return err
		}),
		// the step ends its transaction itself
		define("TxCommitted", func(ctx context.Context, step *worker.Step) error {
			return step.Tx().Commit(ctx)
		}),
		// started in the end's transaction of the step before it, and
		// continuing from its own: each runs after a commit
		worker.NewWorkflow("TxInline", nil).Step("a", ok, nil).
			Step("b", writeRow, &worker.StepOpts{Transactional: true}).
			Step("c", writeRow, &worker.StepOpts{Transactional: true}).
			Step("d", ok, nil),
		// its execution ends while it runs (housekeeping recovers it)
		worker.NewWorkflow("TxMovedOn", nil).Step("a", txStep(func(ctx context.Context, step *worker.Step) error {
			reached <- struct{}{}
			<-release
			return nil
		}), &worker.StepOpts{Transactional: true}),
		worker.NewWorkflow("NotTx", nil).Step("a", func(ctx context.Context, step *worker.Step) error {
			_, err := step.Tx().Exec(ctx, "select 1")
			return err
		}, &worker.StepOpts{OnException: &worker.ExceptionPolicy{Action: worker.ActionPause}}),
	}
	b.start(t, &worker.Config{Workflows: workflows, StepTimeout: 5 * time.Second})

	for _, tc := range []struct {
		workflowType string
		rows         []int
		outcomes     []string
		errorMessage string // the first execution's
	}{
		{"TxSuccess", []int{1}, []string{"a: success", "b: success"}, ""},
		{"TxError", []int{2}, []string{"a: reattempted_by_exception", "a: success", "b: success"}, errSentinel.Error()},
		{"TxPanic", []int{2}, []string{"a: reattempted_by_exception", "a: success", "b: success"}, "boom"},
		{"TxTimeout", []int{2}, []string{"a: reattempted_by_exception", "a: success", "b: success"}, "deadline exceeded"},
		// the writes are the step's outcome: they commit with the signal
		{"TxSuspend", []int{1, 2}, []string{"a: suspended", "a: success", "b: success"}, ""},
		{"TxReattempt", []int{1, 2}, []string{"a: reattempted", "a: success", "b: success"}, ""},
		{"TxSkip", []int{1}, []string{"a: skipped_by_flow_control", "b: success"}, ""},
		{"TxAborted", []int{2}, []string{"a: reattempted_by_exception", "a: success", "b: success"}, "could not commit with its end"},
		{"TxConnLost", []int{2}, []string{"a: recovered", "a: success", "b: success"}, ""},
		{"TxCheckpoint", []int{2}, []string{"a: reattempted_by_exception", "a: success", "b: success"}, "checkpoint in a transactional step"},
		{"TxCommitted", []int{1, 2}, []string{"a: reattempted_by_exception", "a: success", "b: success"}, "tx is closed"},
	} {
		t.Run(tc.workflowType, func(t *testing.T) {
			id := b.create(t, tc.workflowType)
			b.waitState(t, id, goclient.StateFinished)
			require.Equal(t, tc.rows, txRows(t, b, id))
			require.Equal(t, tc.outcomes, b.outcomes(t, id))
			if tc.errorMessage != "" {
				first := b.history(t, id)[0]
				require.NotNil(t, first.ErrorMessage)
				require.Contains(t, *first.ErrorMessage, tc.errorMessage)
			}
		})
	}

	t.Run("TxInline", func(t *testing.T) {
		id := b.create(t, "TxInline")
		b.waitState(t, id, goclient.StateFinished)
		require.Len(t, txRows(t, b, id), 2)
		require.Equal(t, []string{"a: job", "b: -", "c: -", "d: -"}, b.jobIDs(t, id), "one job ran them all")
	})

	t.Run("TxMovedOn", func(t *testing.T) {
		id := b.create(t, "TxMovedOn")
		<-reached
		_, err := b.client.Housekeep(b.ctx, &goclient.HousekeepParams{StuckInProgressAfter: new(time.Nanosecond)})
		require.NoError(t, err)
		close(release)
		b.waitState(t, id, goclient.StateFinished)
		require.Equal(t, []int{2}, txRows(t, b, id), "the first run's write is rolled back with its end unrecorded")
		require.Equal(t, []string{"a: recovered", "a: success"}, b.outcomes(t, id))
	})

	t.Run("NotTransactional", func(t *testing.T) {
		id := b.create(t, "NotTx")
		b.waitState(t, id, goclient.StatePaused)
		first := b.history(t, id)[0]
		require.Equal(t, goclient.OutcomePausedByException, *first.Outcome)
		require.Contains(t, *first.ErrorMessage, "Step.Tx called outside the run of a transactional step")
	})
	// TxMovedOn's first run ends after its workflow finished: its job completes a moment later
	require.Eventually(t, func() bool { return b.unfinishedJobs(t) == 0 }, 10*time.Second, 20*time.Millisecond)
}

func TestTransactionalConfiguration(t *testing.T) {
	t.Parallel()
	resumable := worker.NewWorkflow("Resumable", nil).ResumableStep("a", func(context.Context, *worker.Iteration) error { return nil },
		&worker.ResumableOpts{Transactional: true})
	require.ErrorContains(t, resumable.Validate(), "step a: a resumable step cannot be transactional")
	_, err := worker.New(nil, &worker.Config{Workflows: []*worker.Workflow{resumable}})
	require.ErrorContains(t, err, "a resumable step cannot be transactional")

	httpStep := worker.NewWorkflow("HTTPStep", nil).Step("a", nil,
		&worker.StepOpts{Transactional: true, HTTP: &worker.HTTP{URL: "https://example.com/step"}})
	require.ErrorContains(t, httpStep.Validate(), "step a: an HTTP step cannot be transactional")
}

// txCrashWorkflow is the workflow of TestTransactionalStepKilled: step a
// writes its row on its transaction, records that it did on its own
// connection (tx_reached), and in the "gate" mode returns only once tx_gate
// has a row, so that the test can lock the workflow before the end is
// recorded on the transaction.
func txCrashWorkflow(ownerPool *pgxpool.Pool, mode string) *worker.Workflow {
	return worker.NewWorkflow("TxCrash", nil).
		Step("a", func(ctx context.Context, step *worker.Step) error {
			if err := writeRow(ctx, step); err != nil {
				return err
			}
			if _, err := ownerPool.Exec(ctx, "insert into tx_reached values ($1)", step.ExecutionID); err != nil || mode != "gate" {
				return err
			}
			for {
				var open bool
				if err := ownerPool.QueryRow(ctx, "select exists (select from tx_gate)").Scan(&open); err != nil || open {
					return err
				}
				time.Sleep(10 * time.Millisecond)
			}
		}, &worker.StepOpts{Transactional: true}).
		Step("b", ok, nil)
}

// TestTxCrashChild is the worker process of TestTransactionalStepKilled; it
// does nothing in a normal test run.
func TestTxCrashChild(t *testing.T) {
	if os.Getenv("GENEVA_TX_CHILD_URL") == "" {
		t.Skip("run by TestTransactionalStepKilled")
	}
	ctx := context.Background()
	pool, ownerPool := childPools(t, "GENEVA_TX_CHILD")
	w, err := worker.New(pool, &worker.Config{
		Workflows: []*worker.Workflow{txCrashWorkflow(ownerPool, os.Getenv("GENEVA_TX_CHILD_MODE"))},
		River:     fastRiver(),
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	id, err := strconv.ParseInt(os.Getenv("GENEVA_TX_CHILD_WORKFLOW"), 10, 64)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		workflow, err := w.Client().GetWorkflow(ctx, id)
		return err == nil && workflow.State == goclient.StateFinished
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, w.Stop(ctx))
}

// TestTransactionalStepKilled kills a worker between a transactional step's
// write and its commit, while the end is being recorded on the step's
// transaction: neither the row nor the end is committed, and the step runs
// again.
func TestTransactionalStepKilled(t *testing.T) {
	t.Parallel()
	b, conf := setupWithConfig(t)
	pool := b.pool
	createTxRows(t, b)
	_, err := pool.Exec(b.ctx, "create table tx_reached (execution_id bigint not null); create table tx_gate ();")
	require.NoError(t, err)
	require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "TxCrash", mustDefinition(t, txCrashWorkflow(pool, ""))))
	id := b.create(t, "TxCrash")
	child := func(mode string) *exec.Cmd {
		return startChild(t, "TestTxCrashChild", "GENEVA_TX_CHILD", conf,
			"GENEVA_TX_CHILD_MODE="+mode, "GENEVA_TX_CHILD_WORKFLOW="+strconv.FormatInt(id, 10))
	}
	count := func(sql string, args ...any) int {
		var n int
		require.NoError(t, pool.QueryRow(b.ctx, sql, args...).Scan(&n))
		return n
	}

	// The step writes; the test locks the workflow, so that recording the
	// end on the step's transaction waits, and kills the worker.
	first := child("gate")
	t.Cleanup(func() { _ = first.Process.Kill() })
	require.Eventually(t, func() bool { return count("select count(*) from tx_reached") == 1 },
		30*time.Second, 10*time.Millisecond)
	lock, err := pool.Begin(b.ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lock.Rollback(context.Background()) })
	_, err = lock.Exec(b.ctx, "select from geneva.workflows where id = $1 for update", id)
	require.NoError(t, err)
	_, err = pool.Exec(b.ctx, "insert into tx_gate default values")
	require.NoError(t, err)
	var lockPID int
	require.NoError(t, lock.QueryRow(b.ctx, "select pg_backend_pid()").Scan(&lockPID))
	var blocked []int
	require.Eventually(t, func() bool {
		rows, err := pool.Query(b.ctx, "select pid from pg_stat_activity where $1 = any (pg_blocking_pids(pid))", lockPID)
		require.NoError(t, err)
		blocked, err = pgx.CollectRows(rows, pgx.RowTo[int])
		require.NoError(t, err)
		return len(blocked) > 0
	}, 30*time.Second, 10*time.Millisecond)
	require.Len(t, blocked, 1, "the step's transaction records its end, and waits")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	require.NoError(t, lock.Rollback(b.ctx))
	// the dead worker's backend goes on alone, and ends without a commit
	require.Eventually(t, func() bool {
		return count("select count(*) from pg_stat_activity where pid = $1", blocked[0]) == 0
	}, 30*time.Second, 10*time.Millisecond)
	require.Empty(t, txRows(t, b, id), "the step's write did not commit")
	require.Equal(t, []string{"a: in_progress"}, b.outcomes(t, id), "nor did its end")

	// Housekeeping gives the step back, and a new worker runs it again.
	_, err = b.client.Housekeep(b.ctx, &goclient.HousekeepParams{StuckInProgressAfter: new(time.Nanosecond)})
	require.NoError(t, err)
	second := child("run")
	require.NoError(t, second.Wait(), "the second worker saw the workflow finish")
	require.Equal(t, []int{2}, txRows(t, b, id), "the step's second run committed its row")
	require.Equal(t, []string{"a: recovered", "a: success", "b: success"}, b.outcomes(t, id))
	require.Equal(t, 2, count("select count(*) from tx_reached"))
	// (the dead worker's River job stays running until River's rescuer
	// retries it, an hour later by default: it is left)
	require.Equal(t, 1, count(`select count(*) from river_job where kind = 'geneva_step' and state <> 'completed'`))
	require.Equal(t, 1, count(`select count(*) from river_job where state = 'running' and (args->>'execution_id')::bigint = $1`,
		b.history(t, id)[0].ID), "only the dead worker's")
}

// docs/workflows.md quotes ExampleStepOpts_transactional.
func TestDocsQuoteTransactionalExample(t *testing.T) {
	t.Parallel()
	requireDocQuotes(t, "example_transactional_test.go", "../docs/workflows.md", "transactional")
}
