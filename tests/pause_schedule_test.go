package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPauseSchedule(t *testing.T) {
	t.Parallel()

	t.Run("PausesOnceAndStaysPaused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		b.createSchedule(t, "s", "* * * * *", "latest", false)
		b.setNow(t, s0.Add(10*time.Second))
		var pausedAt time.Time
		require.NoError(t, b.conn.QueryRow(b.ctx, "select paused_at from geneva.pause_schedule('s')").Scan(&pausedAt))
		require.Equal(t, s0.Add(10*time.Second), pausedAt.UTC())
		b.setNow(t, s0.Add(20*time.Second))
		require.NoError(t, b.conn.QueryRow(b.ctx, "select paused_at from geneva.pause_schedule('s')").Scan(&pausedAt))
		require.Equal(t, s0.Add(10*time.Second), pausedAt.UTC(), "pausing a paused schedule changes nothing")
		s := b.schedule(t, "s")
		require.True(t, s.Paused)
		require.Equal(t, s0.Add(time.Minute), s.NextFireAt.UTC(), "its next slot is kept")
		b.setNow(t, s0.Add(time.Hour))
		require.Zero(t, b.fire(t))
	})

	t.Run("UnknownAndNull", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule('nope')")
		requireCode(t, err, "P0002")
		_, err = b.conn.Exec(b.ctx, "select geneva.pause_schedule(null)")
		requireCode(t, err, "22004")
	})
}
