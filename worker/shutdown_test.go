package worker_test

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

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

func TestShutdown(t *testing.T) {
	t.Parallel()

	t.Run("StopLetsRunningStepFinish", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		started := make(chan struct{})
		wf := worker.NewWorkflow("Slow", nil).
			Step("a", func(ctx context.Context, step *worker.Step) error {
				close(started)
				time.Sleep(300 * time.Millisecond) // ignores ctx: it just takes a while
				return nil
			}, nil).
			Step("b", ok, nil)
		w, err := worker.New(b.workerPool, &worker.Config{Workflows: []*worker.Workflow{wf},
			River: fastRiver()})
		require.NoError(t, err)
		require.NoError(t, w.Start(b.ctx))
		id := b.create(t, "Slow")
		<-started

		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(ctx))

		require.Equal(t, []string{"a: success", "b: scheduled"}, b.outcomes(t, id), "a finished; b waits for a worker")
	})

	t.Run("StopGivesBackStepCutOffAfterGracePeriod", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		started := make(chan struct{}, 1)
		blocking := worker.NewWorkflow("Blocking", nil).
			Step("a", func(ctx context.Context, step *worker.Step) error {
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}, nil)
		w, err := worker.New(b.workerPool, &worker.Config{Workflows: []*worker.Workflow{blocking},
			River: fastRiver()})
		require.NoError(t, err)
		require.NoError(t, w.Start(b.ctx))
		id := b.create(t, "Blocking")
		<-started

		ctx, cancel := context.WithTimeout(b.ctx, 100*time.Millisecond)
		defer cancel()
		require.NoError(t, w.Stop(ctx))

		require.Equal(t, []string{"a: recovered", "a: scheduled"}, b.outcomes(t, id), "given back, not failed")
		require.Equal(t, "interrupted", b.history(t, id)[0].Metadata["recovery_reason"])

		// another worker runs it
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{worker.NewWorkflow("Blocking", nil).Step("a", ok, nil)}})
		b.waitState(t, id, "finished")
		require.Equal(t, []string{"a: recovered", "a: success"}, b.outcomes(t, id))
	})
}

// crashWorkflow is the workflow of the crash test: step a records each run in
// crash_runs and, in the "block" mode, never returns.
func crashWorkflow(pool *pgxpool.Pool, mode string) *worker.Workflow {
	return worker.NewWorkflow("Crashy", nil).
		Step("a", func(ctx context.Context, step *worker.Step) error {
			var running int
			err := pool.QueryRow(ctx, `insert into crash_runs (execution_id, others_in_progress)
				select $1, count(*) from geneva.step_executions
				where workflow_id = $2 and state = 'in_progress' and id <> $1
				returning others_in_progress`, step.ExecutionID, step.WorkflowID).Scan(&running)
			if err != nil {
				return err
			}
			if mode == "block" {
				select {} // until the process is killed
			}
			return nil
		}, nil).
		Step("b", ok, nil)
}

// TestCrashChild is the worker process of TestCrashRecovery; it does nothing
// in a normal test run.
func TestCrashChild(t *testing.T) {
	if os.Getenv("GENEVA_CRASH_CHILD_URL") == "" {
		t.Skip("run by TestCrashRecovery")
	}
	ctx := context.Background()
	// the worker runs as a member of geneva_worker; its step looks at the
	// tables as their owner
	pool, ownerPool := childPools(t, "GENEVA_CRASH_CHILD")
	config := &worker.Config{
		Workflows: []*worker.Workflow{crashWorkflow(ownerPool, os.Getenv("GENEVA_CRASH_CHILD_MODE"))},
		River:     fastRiver(),
	}
	if id := os.Getenv("GENEVA_CRASH_CHILD_RIVER_ID"); id != "" {
		// TestLeaderKilled's: short housekeeping settings, a known River ID
		config.River.ID = id
		config.Housekeeping = quickHousekeeping
		config.HeartbeatInterval = quickHeartbeat
	}
	w, err := worker.New(pool, config)
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	workflowID, err := strconv.ParseInt(os.Getenv("GENEVA_CRASH_CHILD_WORKFLOW"), 10, 64)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		workflow, err := w.Client().GetWorkflow(ctx, workflowID)
		return err == nil && workflow.State == "finished"
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, w.Stop(ctx))
}

func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	b, conf := setupWithConfig(t)
	pool := b.pool
	_, err := pool.Exec(b.ctx, `create table crash_runs (
		execution_id bigint not null,
		others_in_progress int not null,
		started_at timestamptz not null default clock_timestamp())`)
	require.NoError(t, err)
	definition, err := crashWorkflow(pool, "").Definition()
	require.NoError(t, err)
	require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "Crashy", definition))
	id := b.create(t, "Crashy")

	child := func(mode string) *exec.Cmd {
		return startChild(t, "TestCrashChild", "GENEVA_CRASH_CHILD", conf,
			"GENEVA_CRASH_CHILD_MODE="+mode, "GENEVA_CRASH_CHILD_WORKFLOW="+fmt.Sprint(id))
	}

	// A worker starts step a and is killed in the middle of it.
	first := child("block")
	require.Eventually(t, func() bool {
		var runs int
		require.NoError(t, pool.QueryRow(b.ctx, "select count(*) from crash_runs").Scan(&runs))
		return runs == 1
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	var killedAt time.Time
	require.NoError(t, pool.QueryRow(b.ctx, "select clock_timestamp()").Scan(&killedAt))
	require.Equal(t, []string{"a: in_progress"}, b.outcomes(t, id), "the step is lost with its worker")

	// A new worker starts; housekeeping finds the execution stuck (with a
	// threshold of zero rather than the hour it would wait in production) and
	// gives the step back.
	second := child("run")
	result, err := b.client.Housekeep(b.ctx, &goclient.HousekeepParams{StuckInProgressAfter: new(time.Nanosecond)})
	require.NoError(t, err)
	require.Equal(t, 1, result.StuckInProgressRecovered)
	require.NoError(t, second.Wait(), "the second worker saw the workflow finish")

	require.Equal(t, []string{"a: recovered", "a: success", "b: success"}, b.outcomes(t, id))
	rows, err := pool.Query(b.ctx, "select others_in_progress, started_at from crash_runs order by started_at")
	require.NoError(t, err)
	type run struct {
		OthersInProgress int
		StartedAt        time.Time
	}
	runs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[run])
	require.NoError(t, err)
	require.Len(t, runs, 2)
	for _, r := range runs {
		require.Zero(t, r.OthersInProgress, "no other execution of the workflow was running")
	}
	require.True(t, runs[1].StartedAt.After(killedAt), "the step ran again only after its first run died")
}
