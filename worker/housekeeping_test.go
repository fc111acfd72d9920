package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

func TestHousekeeping(t *testing.T) {
	t.Parallel()

	// Recovery does not wait for a leader: workers that can never be River's
	// leader recover a step whose worker died within the documented bound,
	// StuckInProgressAfter + 1.5 × Interval after its last sign of life.
	t.Run("RecoversWithoutLeaderWithinBound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const interval = 400 * time.Millisecond
		stuckAfter := time.Second
		wf := worker.NewWorkflow("Orphaned", nil).Step("a", ok, nil)
		workerClient := protocol.New(b.workerPool)
		require.NoError(t, workerClient.DefineWorkflow(b.ctx, "Orphaned", mustDefinition(t, wf)))
		id := b.create(t, "Orphaned")
		// the operator's setting, which the workers' rounds read
		_, err := b.client.SetHousekeepingSettings(b.ctx, &goclient.HousekeepingSettingsParams{
			HousekeepParams: goclient.HousekeepParams{StuckInProgressAfter: &stuckAfter},
		})
		require.NoError(t, err)
		// a worker started step a and died at once
		started, err := workerClient.StartStep(b.ctx, b.history(t, id)[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		require.NotNil(t, started)

		checks := make(chan worker.HousekeepingCheck, 100) // both workers'
		for range 2 {
			b.startWith(t, &worker.Config{
				Workflows: []*worker.Workflow{wf},
				Logger:    slog.New(slog.DiscardHandler),
				River: &river.Config{
					LeaderElectionDisabled: true, // no River leader, no periodic jobs
					FetchPollInterval:      20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond,
				},
				Housekeeping: worker.HousekeepingConfig{Interval: interval},
			}, func(w *worker.Worker) { worker.SignalHousekeeping(w, checks) })
		}
		waitSignal(t, checks, 15*time.Second, func(c worker.HousekeepingCheck) bool {
			return c.Total.StuckInProgressRecovered > 0
		}, "a worker's round recovers step a")
		b.waitState(t, id, "finished")

		require.Equal(t, []string{"a: recovered", "a: success"}, b.outcomes(t, id))
		recovered := b.history(t, id)[0]
		require.Equal(t, "stuck_in_progress", recovered.Metadata["recovery_reason"])
		took := recovered.FinishedAt.Sub(*recovered.StartedAt)
		bound := stuckAfter + interval*3/2
		t.Logf("recovered %s after its last sign of life", took)
		require.GreaterOrEqual(t, took, stuckAfter, "not before the threshold")
		// a second of slack for a loaded machine
		require.LessOrEqual(t, took, bound+time.Second, "recovered %s after its last sign of life; the bound is %s", took, bound)
	})

	// A worker's rounds delete and recover what the operator's settings say,
	// and nothing the worker chooses: with a retention of zero set, its
	// rounds move every ended workflow into history at once.
	t.Run("FollowsTheOperatorsSettings", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wf := worker.NewWorkflow("Any", nil).Step("a", ok, nil)
		require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "Any", mustDefinition(t, wf)))
		id := b.create(t, "Any")
		_, err := b.client.CancelWorkflow(b.ctx, id)
		require.NoError(t, err)
		_, err = b.client.SetHousekeepingSettings(b.ctx, &goclient.HousekeepingSettingsParams{
			HousekeepParams: goclient.HousekeepParams{Retention: new(time.Duration(0))},
		})
		require.NoError(t, err)

		checks := make(chan worker.HousekeepingCheck, 100)
		b.startWith(t, &worker.Config{
			Workflows:    []*worker.Workflow{wf},
			Logger:       slog.New(slog.DiscardHandler),
			Housekeeping: worker.HousekeepingConfig{Interval: 40 * time.Millisecond},
		}, func(w *worker.Worker) { worker.SignalHousekeeping(w, checks) })
		// (a retention of zero moves it into history at once, whatever
		// move_after; its day's partition goes after that day's midnight:
		// docs/history.md)
		waitSignal(t, checks, 10*time.Second, func(c worker.HousekeepingCheck) bool {
			return c.Total.WorkflowsMoved > 0
		}, "the worker's rounds move the canceled workflow out of the live tables")
		var moved bool
		require.NoError(t, b.pool.QueryRow(b.ctx,
			"select exists (select from geneva.workflows_history where id = $1) and not exists (select from geneva.workflows where id = $1)", id).Scan(&moved))
		require.True(t, moved)
	})

	t.Run("StopEndsIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w, err := worker.New(b.pool, &worker.Config{
			Workflows:    []*worker.Workflow{worker.NewWorkflow("Any", nil).Step("a", ok, nil)},
			River:        fastRiver(),
			Housekeeping: worker.HousekeepingConfig{Interval: 40 * time.Millisecond},
		})
		require.NoError(t, err)
		checks := make(chan worker.HousekeepingCheck, 100)
		worker.SignalHousekeeping(w, checks)
		require.NoError(t, w.Start(b.ctx))
		waitSignal(t, checks, 5*time.Second, func(c worker.HousekeepingCheck) bool { return c.Rounds > 0 },
			"the worker runs rounds")

		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(ctx))
		select {
		case <-worker.HousekeepingStopped(w): // no round after Stop: none can run
		default:
			require.Fail(t, "Stop returned before the checks ended")
		}
	})
}

// The housekeeping of TestLeaderKilled: a step without a sign of life for a
// second is stuck (the operator's setting, quickStuckAfter); rounds every 400
// milliseconds. The bound is the stuck-in-progress setting + 1.5 × Interval.
var (
	quickStuckAfter   = time.Second
	quickHousekeeping = worker.HousekeepingConfig{Interval: 400 * time.Millisecond}
	quickHeartbeat    = 200 * time.Millisecond
	quickBound        = quickStuckAfter + quickHousekeeping.Interval*3/2
)

// Killing the worker that is River's leader, in the middle of a step, delays
// recovery by nothing: another worker recovers the step within the bound
// (River would take many seconds to elect a new leader).
func TestLeaderKilled(t *testing.T) {
	t.Parallel()
	conf := dbtest.NewConfig(t)
	pool := dbtest.NewPoolConfig(t, conf)
	b := &testBundle{ctx: context.Background(), pool: pool, workerPool: dbtest.NewPoolAs(t, conf, dbtest.Worker),
		client: goclient.New(pool)}
	_, err := pool.Exec(b.ctx, `create table crash_runs (
		execution_id bigint not null,
		others_in_progress int not null,
		started_at timestamptz not null default clock_timestamp())`)
	require.NoError(t, err)
	require.NoError(t, protocol.New(pool).DefineWorkflow(b.ctx, "Crashy", mustDefinition(t, crashWorkflow(pool, ""))))
	id := b.create(t, "Crashy")
	_, err = b.client.SetHousekeepingSettings(b.ctx, &goclient.HousekeepingSettingsParams{
		HousekeepParams: goclient.HousekeepParams{StuckInProgressAfter: &quickStuckAfter},
	})
	require.NoError(t, err)

	// The leader: a worker process of its own that starts step a and hangs
	// in it, heartbeating.
	leader := startChild(t, "TestCrashChild", "GENEVA_CRASH_CHILD", conf,
		"GENEVA_CRASH_CHILD_MODE=block",
		"GENEVA_CRASH_CHILD_RIVER_ID=doomed-leader",
		"GENEVA_CRASH_CHILD_WORKFLOW="+fmt.Sprint(id))
	t.Cleanup(func() { _ = leader.Process.Kill(); _ = leader.Wait() })
	require.Eventually(t, func() bool {
		var runs, leaders int
		require.NoError(t, pool.QueryRow(b.ctx, "select count(*) from crash_runs").Scan(&runs))
		require.NoError(t, pool.QueryRow(b.ctx,
			"select count(*) from public.river_leader where leader_id = 'doomed-leader' and expires_at > now()").Scan(&leaders))
		return runs == 1 && leaders == 1
	}, 30*time.Second, 10*time.Millisecond, "the child runs step a and leads")

	// Another worker runs beside it, not the leader.
	quick := quickHousekeeping
	checks := make(chan worker.HousekeepingCheck, 100)
	b.startWith(t, &worker.Config{
		Workflows:         []*worker.Workflow{crashWorkflow(pool, "run")},
		Logger:            slog.New(slog.DiscardHandler),
		Housekeeping:      quick,
		HeartbeatInterval: quickHeartbeat,
	}, func(w *worker.Worker) { worker.SignalHousekeeping(w, checks) })
	// wait, check by check, for a round (this worker's or the leader's) run
	// when a step without heartbeats would be past the bound
	waitSignal(t, checks, 30*time.Second, func(worker.HousekeepingCheck) bool {
		var past bool
		require.NoError(t, pool.QueryRow(b.ctx, `select coalesce(bool_or(r.last_run_at >= c.started_at + make_interval(secs => $1)), false)
			from geneva.housekeeping_rounds r, crash_runs c`, quickBound.Seconds()).Scan(&past))
		return past
	}, "a round past the bound")
	require.Equal(t, []string{"a: in_progress"}, b.outcomes(t, id), "a live step's heartbeats keep it")

	require.NoError(t, leader.Process.Signal(syscall.SIGKILL))
	_ = leader.Wait()
	var killedAt time.Time
	require.NoError(t, pool.QueryRow(b.ctx, "select now()").Scan(&killedAt))

	b.waitState(t, id, "finished")
	require.Equal(t, []string{"a: recovered", "a: success", "b: success"}, b.outcomes(t, id))
	recovered := b.history(t, id)[0]
	took := recovered.FinishedAt.Sub(killedAt)
	t.Logf("recovered %s after the leader died (bound %s)", took, quickBound)
	// a second of slack for a loaded machine
	require.LessOrEqual(t, took, quickBound+time.Second)
}
