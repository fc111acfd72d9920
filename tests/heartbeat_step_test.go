package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// heartbeat calls geneva.heartbeat_step and returns whether the execution is
// still in_progress.
func (b *testBundle) heartbeat(t *testing.T, executionID int64) bool {
	t.Helper()
	var alive bool
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.heartbeat_step($1)", executionID).Scan(&alive))
	return alive
}

// executionUpdatedAt reads an execution's updated_at, which housekeeping
// reads to find stuck executions.
func (b *testBundle) executionUpdatedAt(t *testing.T, executionID int64) time.Time {
	t.Helper()
	var at time.Time
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select updated_at from geneva.step_executions where id = $1", executionID).Scan(&at))
	return at
}

func TestHeartbeatStep(t *testing.T) {
	t.Parallel()

	t.Run("StampsInProgressExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		before := b.execution(t, started.ExecutionID)

		b.setNow(t, t0.Add(10*time.Minute))
		require.True(t, b.heartbeat(t, started.ExecutionID))

		require.Equal(t, t0.Add(10*time.Minute), b.executionUpdatedAt(t, started.ExecutionID))
		require.Equal(t, before, b.execution(t, started.ExecutionID), "nothing else changes")
		require.Equal(t, "performing", b.workflow(t, id).State)
	})

	// Housekeeping recovers an in_progress execution by updated_at (stuck
	// after an hour by default): a step that beats is not taken for one
	// whose worker died, however long it runs.
	t.Run("KeepsLongStepFromHousekeepingsRecovery", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		for minutes := 50; minutes <= 150; minutes += 50 {
			b.setNow(t, t0.Add(time.Duration(minutes)*time.Minute))
			require.True(t, b.heartbeat(t, started.ExecutionID))
		}
		b.setNow(t, t0.Add(3*time.Hour))
		require.Equal(t, hkCounts{}, b.hkRound(t, ""))
		require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State)

		// and once the beats stop, it is recovered
		b.setNow(t, t0.Add(4*time.Hour))
		require.Equal(t, hkCounts{StuckInProgressRecovered: 1}, b.hkRound(t, ""))
		require.Equal(t, "recovered", deref(b.execution(t, started.ExecutionID).Outcome))
		require.False(t, b.heartbeat(t, started.ExecutionID), "the worker learns its outcome will not be recorded")
	})

	t.Run("SaysFalseOnceEnded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.complete(t, started.ExecutionID, "success", nil)
		before := b.executionUpdatedAt(t, started.ExecutionID)

		b.setNow(t, t0.Add(time.Minute))
		require.False(t, b.heartbeat(t, started.ExecutionID))

		require.Equal(t, before, b.executionUpdatedAt(t, started.ExecutionID), "an ended execution is not touched")
	})

	t.Run("SaysFalseForScheduledExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		scheduled := b.active(t, id)

		b.setNow(t, t0.Add(time.Minute))
		require.False(t, b.heartbeat(t, scheduled.ID))

		require.Equal(t, t0, b.executionUpdatedAt(t, scheduled.ID))
		require.Equal(t, "scheduled", b.execution(t, scheduled.ID).State)
	})

	t.Run("SaysFalseForUnknownExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		require.False(t, b.heartbeat(t, 12345))
	})

	t.Run("RaisesForNullId", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select geneva.heartbeat_step(null)")
		requireCode(t, err, "22004")
	})
}
