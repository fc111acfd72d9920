package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// syncBuffer is a buffer a command writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestDashboardCommand(t *testing.T) {
	t.Parallel()

	t.Run("ServesUntilInterrupted", func(t *testing.T) {
		t.Parallel()
		databaseURL := migrated(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"--database-url", databaseURL, "dashboard", "--addr", "127.0.0.1:0", "--read-only", "--token", "t0k"}, &out, &out)
		}()
		var url string
		require.Eventually(t, func() bool {
			m := regexp.MustCompile(`Dashboard: (http://\S+) \(read-only\)`).FindStringSubmatch(out.String())
			if m != nil {
				url = m[1]
			}
			return m != nil
		}, 10*time.Second, 20*time.Millisecond, out.String())

		resp, err := http.Get(url)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		// the token once in the URL, then its cookie
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		browser := &http.Client{Jar: jar}
		resp, err = browser.Get(url + "stats?token=t0k")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, string(body), "read-only")
		// the engine's metrics, behind the same token
		resp, err = browser.Get(url + "metrics")
		require.NoError(t, err)
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, string(body), "geneva_scrape_error 0")

		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("the dashboard did not stop when interrupted")
		}
	})

	t.Run("RefusesAnOpenAddressWithoutACredential", func(t *testing.T) {
		t.Parallel()
		out, err := cli(t, "postgres://nobody@127.0.0.1:1/none", "dashboard", "--addr", ":8080")
		var usage usageError
		require.ErrorAs(t, err, &usage)
		require.Contains(t, out+err.Error(), "not a loopback address")
		_, err = cli(t, "postgres://nobody@127.0.0.1:1/none", "dashboard", "--basic-auth", "nopassword")
		require.ErrorAs(t, err, &usage)
	})

	t.Run("SaysWhenTheSchemaIsMissing", func(t *testing.T) {
		t.Parallel()
		_, err := cli(t, empty(t), "dashboard", "--addr", "127.0.0.1:0")
		require.ErrorContains(t, err, "run `geneva migrate` first")
	})
}
