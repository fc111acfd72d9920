package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// TestFakeClockOnlyInTestDatabases: geneva.fake_now moves the clock only
// where the owner turned it on (geneva.allow_fake_clock); no other role
// can enable it.
func TestFakeClockOnlyInTestDatabases(t *testing.T) {
	b := setup(t)
	b.defineThreeSteps(t)
	worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
	far := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	setNowOn(t, worker, far)

	// enabled (the harness's databases): the worker's clock moves
	var now time.Time
	require.NoError(t, worker.QueryRow(b.ctx, "select geneva.now()").Scan(&now))
	require.True(t, now.Equal(far))

	// disabled: ignored, by the functions too
	_, err := b.conn.Exec(b.ctx, "select geneva.allow_fake_clock(false)")
	require.NoError(t, err)
	require.NoError(t, worker.QueryRow(b.ctx, "select geneva.now()").Scan(&now))
	require.WithinDuration(t, time.Now(), now, time.Hour)

	app := dbtest.NewConnAs(t, b.conf, dbtest.App)
	setNowOn(t, app, far)
	var id int64
	require.NoError(t, app.QueryRow(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1')").Scan(&id))
	require.WithinDuration(t, time.Now(), b.active(t, id).ScheduledFor, time.Hour)

	// housekeeping with a far clock recovers nothing that just started
	started, ok, err := startStepOn(b.ctx, worker, b.active(t, id).ID, nil)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = worker.Exec(b.ctx, "select geneva.housekeep_if_due(interval '0')")
	require.NoError(t, err)
	require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State)

	// and no role can enable it
	for _, role := range []dbtest.Role{dbtest.App, dbtest.Operator, dbtest.Reader, dbtest.Worker} {
		conn := dbtest.NewConnAs(t, b.conf, role)
		_, err := conn.Exec(b.ctx, "select geneva.allow_fake_clock(true)")
		requireCode(t, err, "42501")
		_, err = conn.Exec(b.ctx, "create table geneva.fake_clock_enabled ()")
		requireCode(t, err, "42501")
	}
}

// fakeClockEnabled says whether the table that turns the test clock on
// exists.
func (b *testBundle) fakeClockEnabled(t *testing.T) bool {
	t.Helper()
	var enabled bool
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select to_regclass('geneva.fake_clock_enabled') is not null").Scan(&enabled))
	return enabled
}

// engineNow reads geneva.now() on the bundle's connection.
func (b *testBundle) engineNow(t *testing.T) time.Time {
	t.Helper()
	var now time.Time
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.now()").Scan(&now))
	return now
}

func TestAllowFakeClock(t *testing.T) {
	t.Parallel()

	// The harness turned it on; off and on again, each any number of
	// times, and a session's geneva.fake_now follows at once.
	t.Run("TurnsTheClockOffAndOnAgain", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		require.True(t, b.fakeClockEnabled(t))
		require.Equal(t, t0, b.engineNow(t))

		for range 2 {
			_, err := b.conn.Exec(b.ctx, "select geneva.allow_fake_clock(false)")
			require.NoError(t, err)
		}
		require.False(t, b.fakeClockEnabled(t))
		require.WithinDuration(t, time.Now(), b.engineNow(t), time.Hour, "geneva.fake_now is ignored")

		for range 2 {
			_, err := b.conn.Exec(b.ctx, "select geneva.allow_fake_clock(true)")
			require.NoError(t, err)
		}
		require.True(t, b.fakeClockEnabled(t))
		require.Equal(t, t0, b.engineNow(t))
	})

	// Turned off in a transaction that rolls back, it stays on: the switch
	// is the table, and DDL is transactional.
	t.Run("RolledBackChangesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)

		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select geneva.allow_fake_clock(false)")
		require.NoError(t, err)
		var now time.Time
		require.NoError(t, tx.QueryRow(b.ctx, "select geneva.now()").Scan(&now))
		require.NotEqual(t, t0, now, "off within the transaction")
		require.NoError(t, tx.Rollback(b.ctx))

		require.True(t, b.fakeClockEnabled(t))
		require.Equal(t, t0, b.engineNow(t))
	})

	t.Run("RaisesForNull", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select geneva.allow_fake_clock(null)")

		requireCode(t, err, "22004")
		require.True(t, b.fakeClockEnabled(t), "left as it was")
	})
}
