package worker_test

// A worker killed while a batch of step ends is in flight loses nothing and
// doubles nothing: the batch's transaction commits or not as a whole, and
// housekeeping gives back whatever the dead worker left in_progress.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

// batchedWorkflow is the workflow of TestKilledMidBatch: step a records each
// run in batch_runs (with how many other executions of its workflow were
// in_progress) and, in the "gate" mode, returns only once batch_gate has a
// row, so that the test can lock the workflows before the steps report.
func batchedWorkflow(pool *pgxpool.Pool, mode string) *worker.Workflow {
	return worker.NewWorkflow("Batched", nil).
		Step("a", func(ctx context.Context, step *worker.Step) error {
			_, err := pool.Exec(ctx, `insert into batch_runs (execution_id, others_in_progress)
				select $1, count(*) from geneva.step_executions
				where workflow_id = $2 and state = 'in_progress' and id <> $1`, step.ExecutionID, step.WorkflowID)
			if err != nil || mode != "gate" {
				return err
			}
			for {
				var open bool
				if err := pool.QueryRow(ctx, "select exists (select from batch_gate)").Scan(&open); err != nil || open {
					return err
				}
				time.Sleep(10 * time.Millisecond)
			}
		}, nil).
		Step("b", ok, nil)
}

// TestBatchChild is the worker process of TestKilledMidBatch; it does nothing
// in a normal test run.
func TestBatchChild(t *testing.T) {
	if os.Getenv("GENEVA_BATCH_CHILD_URL") == "" {
		t.Skip("run by TestKilledMidBatch")
	}
	ctx := context.Background()
	pool, ownerPool := childPools(t, "GENEVA_BATCH_CHILD")
	mode := os.Getenv("GENEVA_BATCH_CHILD_MODE")
	w, err := worker.New(pool, &worker.Config{
		Workflows:         []*worker.Workflow{batchedWorkflow(ownerPool, mode)},
		River:             fastRiver(),
		CompleteBatchSize: 64,
	})
	require.NoError(t, err)
	if mode == "gate" {
		// the batch closes when it holds every running step
		worker.SetCompleteWindow(w, time.Minute)
	}
	require.NoError(t, w.Start(ctx))
	var ids []int64
	for _, s := range strings.Split(os.Getenv("GENEVA_BATCH_CHILD_WORKFLOWS"), ",") {
		id, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	require.Eventually(t, func() bool {
		for _, id := range ids {
			workflow, err := w.Client().GetWorkflow(ctx, id)
			if err != nil || workflow.State != "finished" {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, w.Stop(ctx))
}

func TestKilledMidBatch(t *testing.T) {
	t.Parallel()
	b, conf := setupWithConfig(t)
	pool := b.pool
	_, err := pool.Exec(b.ctx, `
		create table batch_runs (execution_id bigint not null, others_in_progress int not null);
		create table batch_gate ();`)
	require.NoError(t, err)
	definition, err := batchedWorkflow(pool, "").Definition()
	require.NoError(t, err)
	require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "Batched", definition))
	const workflows = 3
	var ids []int64
	var list []string
	for range workflows {
		id := b.create(t, "Batched")
		ids = append(ids, id)
		list = append(list, fmt.Sprint(id))
	}
	child := func(mode string) *exec.Cmd {
		return startChild(t, "TestBatchChild", "GENEVA_BATCH_CHILD", conf,
			"GENEVA_BATCH_CHILD_MODE="+mode,
			"GENEVA_BATCH_CHILD_WORKFLOWS="+strings.Join(list, ","))
	}
	count := func(sql string, args ...any) int {
		var n int
		require.NoError(t, pool.QueryRow(b.ctx, sql, args...).Scan(&n))
		return n
	}

	// A worker runs step a of every workflow; while they run, the test locks
	// the workflows, so that the batch recording their ends waits, in
	// flight; and the worker is killed.
	first := child("gate")
	require.Eventually(t, func() bool { return count("select count(*) from batch_runs") == workflows },
		30*time.Second, 10*time.Millisecond)
	lock, err := pool.Begin(b.ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lock.Rollback(context.Background()) })
	_, err = lock.Exec(b.ctx, "select from geneva.workflows where id = any ($1) for update", ids)
	require.NoError(t, err)
	_, err = pool.Exec(b.ctx, "insert into batch_gate default values")
	require.NoError(t, err)
	// (the test's role cannot read the worker's queries in
	// pg_stat_activity, but sees who waits for whom)
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
	require.Len(t, blocked, 1, "one batch records the three ends, and waits")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	require.NoError(t, lock.Rollback(b.ctx))
	// the dead worker's backend goes on alone, and ends
	require.Eventually(t, func() bool {
		return count("select count(*) from pg_stat_activity where pid = $1", blocked[0]) == 0
	}, 30*time.Second, 10*time.Millisecond)
	t.Logf("after the kill: %v", b.outcomes(t, ids[0]))

	// Housekeeping (with a threshold of zero rather than an hour) gives back
	// what the dead worker left in_progress, and a new worker finishes.
	_, err = b.client.Housekeep(b.ctx, &goclient.HousekeepParams{StuckInProgressAfter: new(time.Nanosecond)})
	require.NoError(t, err)
	second := child("run")
	require.NoError(t, second.Wait(), "the second worker saw the workflows finish")

	for _, id := range ids {
		successes := map[string]int{}
		for _, e := range b.history(t, id) {
			switch {
			case e.Outcome != nil && *e.Outcome == "success":
				successes[e.StepName]++
			case e.Outcome != nil && *e.Outcome == "recovered":
			default:
				t.Fatalf("workflow %d: unexpected execution %s %s %v", id, e.StepName, e.State, e.Outcome)
			}
		}
		require.Equal(t, map[string]int{"a": 1, "b": 1}, successes, "workflow %d: each step ended once", id)
	}
	rows, err := pool.Query(b.ctx, "select others_in_progress from batch_runs")
	require.NoError(t, err)
	others, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	for _, n := range others {
		require.Zero(t, n, "no other execution of its workflow ran beside a step")
	}
	require.Zero(t, b.unfinishedJobs(t))
}
