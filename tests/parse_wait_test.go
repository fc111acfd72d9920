package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// TestParseWait: a reply's wait is read by the rule of a definition's waits
// (geneva._parse_wait): seconds, or an interval's text, from 0 to 100 years.
func TestParseWait(t *testing.T) {
	t.Parallel()
	b := setup(t)
	worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
	seconds := func(raw *string) (float64, error) {
		var s float64
		err := worker.QueryRow(b.ctx, "select extract(epoch from geneva.parse_wait($1::jsonb))::float8", raw).Scan(&s)
		return s, err
	}
	for raw, want := range map[string]time.Duration{
		`null`:                 0,
		`90`:                   90 * time.Second,
		`1.5`:                  1500 * time.Millisecond,
		`"90s"`:                90 * time.Second,
		`"1h30m"`:              90 * time.Minute,
		`"30 seconds"`:         30 * time.Second,
		`"1 hour 30 minutes"`:  90 * time.Minute,
		`"1 hour, 30 minutes"`: 90 * time.Minute,
		`"2.5 min"`:            150 * time.Second,
		`"1 day"`:              24 * time.Hour,
		`"2 weeks"`:            14 * 24 * time.Hour,
		`"250 ms"`:             250 * time.Millisecond,
		`"3 Hours"`:            3 * time.Hour,
	} {
		got, err := seconds(&raw)
		require.NoError(t, err, raw)
		require.InDelta(t, want.Seconds(), got, 1e-6, raw)
	}
	got, err := seconds(nil)
	require.NoError(t, err, "SQL NULL: no wait")
	require.Zero(t, got)
	for _, raw := range []string{
		`"soon"`, `"-5s"`, `-1`, `3155760001`, `"101 years"`, `"876601h"`, `{"seconds": 5}`,
		`"5 fortnights"`, `"1 minute and 30 seconds"`, `true`, `[5]`,
	} {
		_, err := seconds(&raw)
		requireCode(t, err, "22023")
	}
}
