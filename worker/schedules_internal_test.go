package worker

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestScheduleConfigDefaults(t *testing.T) {
	f, err := newScheduleFirer(ScheduleConfig{}, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Equal(t, time.Second, f.interval, "a second by default")
	f, err = newScheduleFirer(ScheduleConfig{Disabled: true}, nil, nil)
	require.NoError(t, err)
	require.Nil(t, f)
	_, err = newScheduleFirer(ScheduleConfig{Interval: -1}, nil, nil)
	require.Error(t, err)
}
