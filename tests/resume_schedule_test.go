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

	// Issue 44, item 7: resuming counts the next slot from now, so the
	// schedule does not look late by every slot it missed while paused:
	// `latest`'s is the newest slot it missed, which fires at once, `none`'s
	// the first after now (or one at most a minute old, which still fires);
	// `all`'s stays the first it missed.
	t.Run("ResumingCountsTheNextSlotFromNow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		for _, catchUp := range []string{"latest", "none", "all"} {
			b.createSchedule(t, catchUp, "0 * * * *", catchUp, true)
			_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule($1)", catchUp)
			require.NoError(t, err)
		}
		b.setNow(t, s0.Add(30*time.Hour+30*time.Second))
		want := map[string]time.Time{
			"latest": s0.Add(30 * time.Hour),
			"none":   s0.Add(30 * time.Hour),
			"all":    s0.Add(time.Hour),
		}
		for catchUp, next := range want {
			var got time.Time
			require.NoError(t, b.conn.QueryRow(b.ctx,
				"select next_fire_at from geneva.resume_schedule($1)", catchUp).Scan(&got))
			require.Equal(t, next, got.UTC(), catchUp)
		}
		require.Equal(t, 2+30, b.fire(t), "latest and none fire 18:00, all the first 30 slots it missed")

		// resumed more than a minute after its slot, `none` waits for the next
		for _, catchUp := range []string{"latest", "none"} {
			_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule($1)", catchUp)
			require.NoError(t, err)
		}
		b.setNow(t, s0.Add(40*time.Hour+61*time.Second))
		for catchUp, next := range map[string]time.Time{"latest": s0.Add(40 * time.Hour), "none": s0.Add(41 * time.Hour)} {
			_, err := b.conn.Exec(b.ctx, "select geneva.resume_schedule($1)", catchUp)
			require.NoError(t, err)
			s := b.schedule(t, catchUp)
			require.Equal(t, next, s.NextFireAt.UTC(), catchUp)
		}
		require.Zero(t, b.schedule(t, "none").LagSeconds, "none is not late: it missed its slots by design")

		// resumed before its next slot: nothing changes
		_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule('none')")
		require.NoError(t, err)
		b.setNow(t, s0.Add(40*time.Hour+30*time.Minute))
		_, err = b.conn.Exec(b.ctx, "select geneva.resume_schedule('none')")
		require.NoError(t, err)
		require.Equal(t, s0.Add(41*time.Hour), b.schedule(t, "none").NextFireAt.UTC())
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
