package worker

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

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
