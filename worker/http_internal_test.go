package worker

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseWait(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]time.Duration{
		``:                          0,
		`null`:                      0,
		`90`:                        90 * time.Second,
		`1.5`:                       1500 * time.Millisecond,
		`"90s"`:                     90 * time.Second,
		`"1h30m"`:                   90 * time.Minute,
		`"30 seconds"`:              30 * time.Second,
		`"1 hour 30 minutes"`:       90 * time.Minute,
		`"2.5 min"`:                 150 * time.Second,
		`"1 day"`:                   24 * time.Hour,
		`"2 weeks"`:                 14 * 24 * time.Hour,
		`"250 ms"`:                  250 * time.Millisecond,
		`"3 Hours"`:                 3 * time.Hour,
		`"100 years"`:               LongestWait,
		`"1 hour, 30 minutes"`:      -1,
		`"soon"`:                    -1,
		`"-5s"`:                     -1,
		`-1`:                        -1,
		`3155760001`:                -1,
		`"101 years"`:               -1,
		`"876601h"`:                 -1,
		`{"seconds": 5}`:            -1,
		`"5 fortnights"`:            -1,
		`"5 seconds 5 lightyears"`:  -1,
		`"1 minute and 30 seconds"`: -1,
	} {
		got, err := parseWait(json.RawMessage(raw))
		if want < 0 {
			require.Error(t, err, raw)
			continue
		}
		require.NoError(t, err, raw)
		require.Equal(t, want, got, raw)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for value, want := range map[string]time.Duration{
		"":                              0,
		"120":                           2 * time.Minute,
		" 5 ":                           5 * time.Second,
		"-3":                            0,
		"soon":                          0,
		"Tue, 01 Jan 2030 12:01:00 GMT": time.Minute,
		"Tue, 01 Jan 2030 11:00:00 GMT": 0, // passed
	} {
		require.Equal(t, want, retryAfter(value, now), value)
	}
	require.Equal(t, []string{"http.status.503", "http.status.5xx"}, (&HTTPError{Class: "http.status.503", Status: http.StatusServiceUnavailable}).classes())
	require.Equal(t, []string{"http.timeout"}, (&HTTPError{Class: "http.timeout"}).classes())
}
