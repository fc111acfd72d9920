package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestResumeSchedule(t *testing.T) {
	t.Parallel()

	t.Run("ResumesAndFiresAgain", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		b.createSchedule(t, "s", "*/10 * * * *", "latest", true)
		_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule('s')")
		require.NoError(t, err)
		b.setNow(t, s0.Add(5*time.Minute))
		var paused bool
		require.NoError(t, b.conn.QueryRow(b.ctx, "select paused_at is not null from geneva.resume_schedule('s')").Scan(&paused))
		require.False(t, paused)
		require.NoError(t, b.conn.QueryRow(b.ctx, "select paused_at is not null from geneva.resume_schedule('s')").Scan(&paused))
		require.False(t, paused, "resuming an active schedule changes nothing")
		require.Equal(t, s0.Add(5*time.Minute), b.schedule(t, "s").UpdatedAt.UTC())
		require.Zero(t, b.fire(t))
		b.setNow(t, s0.Add(10*time.Minute))
		require.Equal(t, 1, b.fire(t))
	})

	t.Run("UnknownAndNull", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.conn.Exec(b.ctx, "select geneva.resume_schedule('nope')")
		requireCode(t, err, "P0002")
		_, err = b.conn.Exec(b.ctx, "select geneva.resume_schedule(null)")
		requireCode(t, err, "22004")
	})
}
