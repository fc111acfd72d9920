package worker_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
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
		const (
			interval   = 400 * time.Millisecond
			stuckAfter = time.Second
		)
		wf := worker.NewWorkflow("Orphaned", nil).Step("a", ok, nil)
		require.NoError(t, b.client.DefineWorkflow(b.ctx, "Orphaned", mustDefinition(t, wf)))
		id := b.create(t, "Orphaned")
		// a worker started step a and died at once
		started, err := b.client.StartStep(b.ctx, b.history(t, id)[0].ID, goclient.PreconditionNone)
		require.NoError(t, err)
		require.NotNil(t, started)

		for range 2 {
			b.start(t, &worker.Config{
				Workflows: []*worker.Workflow{wf},
				Logger:    slog.New(slog.DiscardHandler),
				River: &river.Config{
					LeaderElectionDisabled: true, // no River leader, no periodic jobs
					FetchPollInterval:      20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond,
				},
				Housekeeping: worker.HousekeepingConfig{
					Interval: interval,
					Params:   goclient.HousekeepParams{StuckInProgressAfter: stuckAfter},
				},
			})
		}
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

	t.Run("StopEndsIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w, err := worker.New(b.pool, &worker.Config{
			Workflows:    []*worker.Workflow{worker.NewWorkflow("Any", nil).Step("a", ok, nil)},
			River:        fastRiver(),
			Housekeeping: worker.HousekeepingConfig{Interval: 40 * time.Millisecond},
		})
		require.NoError(t, err)
		require.NoError(t, w.Start(b.ctx))
		lastRun := func() string {
			var at string
			require.NoError(t, b.pool.QueryRow(b.ctx, "select last_run_at::text from geneva.housekeeping_rounds").Scan(&at))
			return at
		}
		require.Eventually(t, func() bool { return lastRun() != "-infinity" }, 5*time.Second, 10*time.Millisecond,
			"the worker runs rounds")

		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(ctx))
		last := lastRun()
		time.Sleep(200 * time.Millisecond)
		after := lastRun()
		require.Equal(t, last, after, "no round after Stop")
	})
}
