package worker_test

// A worker killed (SIGKILL) while its step holds the only slot of a limit's
// key: the slot stays the dead step's, and its key's waiter keeps waiting,
// until housekeeping recovers the step, which frees the slot and passes it
// to the waiter; a new worker then finishes both workflows, one at a time.

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

// heldWorkflow is the workflow of TestLimitKilledWorkerFreesItsSlot: one
// step, at most one in progress per group, that records each run in
// held_runs (with how many executions of its group were in progress then)
// and, in the "hold" mode, runs until its process dies.
func heldWorkflow(pool *pgxpool.Pool, mode string) *worker.Workflow {
	return worker.NewWorkflow("Held", &worker.WorkflowOpts{
		Concurrency: &worker.Concurrency{By: worker.ByGroup, Limit: 1},
	}).
		Step("a", func(ctx context.Context, step *worker.Step) error {
			_, err := pool.Exec(ctx, `insert into held_runs (execution_id, in_progress)
				select $1, count(*) from geneva.step_executions e
				join geneva.workflows w on w.id = e.workflow_id
				where w.group_name = 'acme' and e.state = 'in_progress'`, step.ExecutionID)
			if err != nil || mode != "hold" {
				return err
			}
			<-ctx.Done()
			return ctx.Err()
		}, nil)
}

// TestLimitHeldChild is the worker process of
// TestLimitKilledWorkerFreesItsSlot; it does nothing in a normal test run.
func TestLimitHeldChild(t *testing.T) {
	if os.Getenv("GENEVA_HELD_CHILD_URL") == "" {
		t.Skip("run by TestLimitKilledWorkerFreesItsSlot")
	}
	ctx := context.Background()
	pool, ownerPool := childPools(t, "GENEVA_HELD_CHILD")
	mode := os.Getenv("GENEVA_HELD_CHILD_MODE")
	w, err := worker.New(pool, &worker.Config{
		Workflows: []*worker.Workflow{heldWorkflow(ownerPool, mode)},
		River:     fastRiver(),
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	if mode == "hold" {
		select {} // until the test kills the process
	}
	require.Eventually(t, func() bool {
		var ongoing int
		require.NoError(t, ownerPool.QueryRow(ctx, `select count(*) from geneva.workflows
			where workflow_type = 'Held' and state not in ('finished', 'canceled')`).Scan(&ongoing))
		return ongoing == 0
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, w.Stop(ctx))
}

func TestLimitKilledWorkerFreesItsSlot(t *testing.T) {
	t.Parallel()
	b, conf := setupWithConfig(t)
	pool := b.pool
	_, err := pool.Exec(b.ctx, "create table held_runs (execution_id bigint not null, in_progress int not null)")
	require.NoError(t, err)
	definition, err := heldWorkflow(pool, "").Definition()
	require.NoError(t, err)
	require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "Held", definition))
	b.createInGroup(t, "Held", "acme", 2)
	child := func(mode string) *exec.Cmd {
		return startChild(t, "TestLimitHeldChild", "GENEVA_HELD_CHILD", conf, "GENEVA_HELD_CHILD_MODE="+mode)
	}
	count := func(sql string) int {
		var n int
		require.NoError(t, pool.QueryRow(b.ctx, sql).Scan(&n))
		return n
	}
	const (
		slots   = "select count(*) from geneva.limit_slots where workflow_id is not null"
		waiting = "select count(*) from geneva.step_executions where limit_wait_key is not null"
	)

	// A worker runs one workflow's step, which holds the key's slot; the
	// other's claim finds the key full and waits; the worker is killed.
	first := child("hold")
	require.Eventually(t, func() bool {
		return count("select count(*) from held_runs") == 1 && count(waiting) == 1
	}, 30*time.Second, 10*time.Millisecond)
	var killedAt time.Time
	require.NoError(t, pool.QueryRow(b.ctx, "select now()").Scan(&killedAt))
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	require.Equal(t, 1, count(slots), "the dead step still holds its slot")
	require.Equal(t, 1, count(waiting), "its key's waiter still waits")

	// Housekeeping (with a threshold of zero rather than an hour) recovers
	// the dead step, which frees its slot: the waiter takes it and is made
	// due with a River job (the recovered step's repeat, due too, will find
	// the key full at its claim, and wait).
	_, err = b.client.Housekeep(b.ctx, &goclient.HousekeepParams{StuckInProgressAfter: new(time.Nanosecond)})
	require.NoError(t, err)
	require.Equal(t, 1, count(slots), "the freed slot passed to the waiter")
	require.Zero(t, count(`select count(*) from geneva.step_executions e
		join geneva.limit_slots ls on ls.workflow_id = e.workflow_id
		where e.outcome = 'recovered'`), "the recovered step's workflow holds no slot")
	require.Equal(t, 1, count(`select count(*) from geneva.limit_slots ls
		join geneva.step_executions e on e.workflow_id = ls.workflow_id
		where e.state = 'scheduled' and e.limit_wait_key is null and e.job_id is not null`),
		"the waiter holds the slot, due, with its job")

	second := child("run")
	require.NoError(t, second.Wait(), "the second worker saw both workflows finish")
	require.Zero(t, count(slots), "every slot freed")
	require.Equal(t, 3, count("select count(*) from held_runs"), "the killed run, then each workflow's")
	require.Equal(t, 1, count("select max(in_progress) from held_runs"), "never two in progress")
	// (the dead worker's River jobs stay running until River's rescuer
	// retries them, an hour later by default: those are left)
	var unfinished int
	require.NoError(t, pool.QueryRow(b.ctx, `select count(*) from river_job
		where kind = 'geneva_step' and state <> 'completed' and not (state = 'running' and attempted_at < $1)`,
		killedAt).Scan(&unfinished))
	require.Zero(t, unfinished, "every job but the dead worker's finished")
}
