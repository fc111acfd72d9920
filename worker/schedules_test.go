package worker_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

func TestSchedules(t *testing.T) {
	t.Parallel()

	// Workers that can never be River's leader fire a due slot, once, within
	// their interval.
	t.Run("WorkersFireADueSlotOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wf := worker.NewWorkflow("Digest", nil).Step("send", ok, nil)
		require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "Digest", mustDefinition(t, wf)))

		// a schedule created two minutes ago (under the test clock): its first
		// slot has passed
		conn, err := b.pool.Acquire(b.ctx)
		require.NoError(t, err)
		_, err = conn.Exec(b.ctx, "select set_config('geneva.fake_now', (now() - interval '2 minutes')::text, false)")
		require.NoError(t, err)
		_, err = goclient.New(conn).CreateSchedule(b.ctx, "digest", "* * * * *", "Digest", "Team", "ops", nil)
		require.NoError(t, err)
		_, err = conn.Exec(b.ctx, "reset geneva.fake_now")
		require.NoError(t, err)
		conn.Release()

		fired := make(chan worker.ScheduleFiring, 100) // both workers'
		for range 2 {
			b.startWith(t, &worker.Config{
				Workflows: []*worker.Workflow{wf},
				Logger:    slog.New(slog.DiscardHandler),
				River: &river.Config{
					LeaderElectionDisabled: true,
					FetchPollInterval:      20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond,
				},
				Schedules: worker.ScheduleConfig{Interval: 50 * time.Millisecond},
			}, func(w *worker.Worker) { worker.SignalFiring(w, fired) })
		}
		waitSignal(t, fired, 10*time.Second, func(f worker.ScheduleFiring) bool { return f.Created > 0 },
			"a worker fires the due slot")
		schedules, err := b.client.Schedules(b.ctx)
		require.NoError(t, err)
		schedule := schedules[0]
		require.Positive(t, schedule.FiredCount)
		require.NotNil(t, schedule.LastWorkflowID)
		b.waitState(t, *schedule.LastWorkflowID, goclient.StateFinished)

		firings, err := b.client.ScheduleFirings(b.ctx, "digest", false, 0)
		require.NoError(t, err)
		require.Len(t, firings, 1, "the latest missed slot (catch-up latest), once")
		require.Less(t, firings[0].Slot, time.Now())
		require.Greater(t, schedule.NextFireAt, time.Now().Add(-time.Second))
	})

	t.Run("BadConfig", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := worker.New(b.workerPool, &worker.Config{
			Workflows: []*worker.Workflow{worker.NewWorkflow("X", nil).Step("a", ok, nil)},
			Schedules: worker.ScheduleConfig{Interval: -time.Second},
		})
		require.Error(t, err)
	})
}
