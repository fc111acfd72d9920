package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNow(t *testing.T) {
	t.Parallel()

	t.Run("FollowsFakeNow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		b.setNow(t, t0)
		var now time.Time
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.now()").Scan(&now))

		require.Equal(t, t0, now)
	})

	t.Run("IsNowWithoutFakeNow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		var engine, real time.Time
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.now(), now()").Scan(&engine, &real))
		require.Equal(t, real, engine)

		// and again once a fake time has been reset
		b.setNow(t, t0)
		_, err := b.conn.Exec(b.ctx, "reset geneva.fake_now")
		require.NoError(t, err)
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.now(), now()").Scan(&engine, &real))
		require.Equal(t, real, engine)
	})
}
