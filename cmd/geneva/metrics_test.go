package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startMetrics runs geneva metrics with args on a free loopback port until
// the test ends, and returns its base URL (http://127.0.0.1:PORT).
func startMetrics(t *testing.T, databaseURL string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--database-url", databaseURL, "metrics", "--addr", "127.0.0.1:0"}, args...), &out, &out)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("the metrics server did not stop when interrupted")
		}
	})
	var base string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`serving metrics at (http://\S+)/metrics`).FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	}, 20*time.Second, 20*time.Millisecond, out.String())
	return base
}

// scrape gets base/metrics with Host set to host ("" for base's) and
// header, and returns the status and body.
func scrape(t *testing.T, base, host string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestMetrics(t *testing.T) {
	t.Parallel()

	t.Run("ServesUntilInterrupted", func(t *testing.T) {
		t.Parallel()
		base := startMetrics(t, migrated(t))
		status, body := scrape(t, base, "", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, "geneva_scrape_error 0")
	})

	t.Run("WithoutCredentialsAnswersOnlyLoopbackHosts", func(t *testing.T) {
		t.Parallel()
		base := startMetrics(t, migrated(t))
		for _, host := range []string{"localhost:9187", "localhost", "127.0.0.1:9187", "[::1]:9187"} {
			status, body := scrape(t, base, host, nil)
			require.Equal(t, http.StatusOK, status, host)
			require.Contains(t, body, "geneva_scrape_error 0", host)
		}
		for _, host := range []string{"evil.example:9187", "evil.example", "metrics.localhost", "192.168.1.5:9187"} {
			status, body := scrape(t, base, host, nil)
			require.Equal(t, http.StatusMisdirectedRequest, status, host)
			require.Contains(t, body, "DNS rebinding", host)
			require.NotContains(t, body, "geneva_", host)
		}
	})

	t.Run("TakesTheDashboardsCredentials", func(t *testing.T) {
		t.Parallel()
		base := startMetrics(t, migrated(t), "--token", "t0k", "--basic-auth", "prometheus:pw")
		status, body := scrape(t, base, "", nil)
		require.Equal(t, http.StatusUnauthorized, status)
		require.NotContains(t, body, "geneva_")
		status, _ = scrape(t, base, "", http.Header{"Authorization": {"Bearer wrong"}})
		require.Equal(t, http.StatusUnauthorized, status)

		// with credentials, any host: they protect it
		status, body = scrape(t, base, "metrics.example:443", http.Header{"Authorization": {"Bearer t0k"}})
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, "geneva_scrape_error 0")
		req, err := http.NewRequest(http.MethodGet, base, nil)
		require.NoError(t, err)
		req.SetBasicAuth("prometheus", "pw")
		status, body = scrape(t, base, "metrics.example", req.Header)
		require.Equal(t, http.StatusOK, status, body)
		req.SetBasicAuth("prometheus", "wrong")
		status, _ = scrape(t, base, "", req.Header)
		require.Equal(t, http.StatusUnauthorized, status)
	})

	t.Run("RefusesAnOpenAddressWithoutACredential", func(t *testing.T) {
		t.Parallel()
		// the database is never reached: the flags are refused first
		nowhere := "postgres://nobody@127.0.0.1:1/none"
		var usage usageError
		for _, addr := range []string{"0.0.0.0:9187", ":9187", "192.168.1.5:9187", "[::]:9187"} {
			out, err := cli(t, nowhere, "metrics", "--addr", addr)
			require.ErrorAs(t, err, &usage, addr)
			require.Contains(t, out+err.Error(), "not a loopback address", addr)
		}
		_, err := cli(t, nowhere, "metrics", "--basic-auth", "nopassword")
		require.ErrorAs(t, err, &usage)

		// with a credential the address is taken (and the database is
		// what fails)
		for _, flags := range [][]string{{"--token", "t0k"}, {"--basic-auth", "prometheus:pw"}} {
			_, err = cli(t, nowhere, append([]string{"metrics", "--addr", "0.0.0.0:9187"}, flags...)...)
			require.Error(t, err, flags)
			require.NotErrorAs(t, err, &usage, flags)
			require.ErrorContains(t, err, "connecting to the database", flags)
		}
	})
}
