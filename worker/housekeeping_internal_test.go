package worker

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
)

// A worker without an Interval times its checks by the settings' round
// interval, read at each check (a quarter to a half of it), keeps the last
// one read when a read fails, and checks again in settingsRetry when the
// setting is zero; a configured Interval is used without a read.
func TestHousekeeperWaitsForTheSetting(t *testing.T) {
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	owner := dbtest.NewPoolConfig(t, conf)
	client := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Worker))
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	setting := func(interval string) {
		t.Helper()
		_, err := owner.Exec(ctx, "select geneva.set_housekeeping_settings(p_round_interval => $1::interval)", interval)
		require.NoError(t, err)
	}
	within := func(wait, from, to time.Duration) {
		t.Helper()
		require.GreaterOrEqual(t, wait, from)
		require.LessOrEqual(t, wait, to)
	}

	h, err := newHousekeeper(HousekeepingConfig{}, client, logger)
	require.NoError(t, err)
	setting("2 hours")
	within(h.nextWait(ctx), 30*time.Minute, time.Hour)

	// an operator's change reaches the next check
	setting("1 hour")
	within(h.nextWait(ctx), 15*time.Minute, 30*time.Minute)

	// a failed read keeps the last interval read
	setting("4 hours")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	within(h.nextWait(canceled), 15*time.Minute, 30*time.Minute)

	// a zero setting: every check is due; checked again soon
	setting("0")
	require.Equal(t, settingsRetry, h.nextWait(ctx))

	// a configured interval reads nothing
	h, err = newHousekeeper(HousekeepingConfig{Interval: 4 * time.Minute}, goclient.New(nil), logger)
	require.NoError(t, err)
	within(h.nextWait(ctx), time.Minute, 2*time.Minute)
}
