package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// standbyLike returns the URL of a new database with Geneva's schema and
// one workflow of the type OnlyOnTheStandby, for --read-url.
func standbyLike(t *testing.T) string {
	t.Helper()
	url := migrated(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `select geneva.define_workflow('OnlyOnTheStandby', '{"steps": [{"name": "a"}]}'),
		geneva.create_workflow('OnlyOnTheStandby', 'User', '1')`)
	require.NoError(t, err)
	return url
}

// nowhere is a database URL no server answers.
const nowhere = "postgres://nobody@127.0.0.1:1/none"

func TestReadURL(t *testing.T) {
	t.Parallel()

	t.Run("Metrics", func(t *testing.T) {
		t.Parallel()
		// the database URL is never reached
		base := startMetrics(t, nowhere, "--read-url", standbyLike(t))
		status, body := scrape(t, base, "", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, "geneva_scrape_error 0")
		require.Contains(t, body, `"OnlyOnTheStandby"`)
	})

	t.Run("Dashboard", func(t *testing.T) {
		t.Parallel()
		read := standbyLike(t)
		for name, args := range map[string][]string{
			"ActionsToTheDatabase":    {"--database-url", migrated(t), "dashboard", "--read-url", read},
			"ReadOnlyNeedsNoDatabase": {"--database-url", nowhere, "dashboard", "--read-only", "--read-url", read},
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithCancel(context.Background())
				var out syncBuffer
				done := make(chan error, 1)
				go func() { done <- run(ctx, append(args, "--addr", "127.0.0.1:0"), &out, &out) }()
				t.Cleanup(func() {
					cancel()
					select {
					case err := <-done:
						require.NoError(t, err)
					case <-time.After(10 * time.Second):
						t.Error("the dashboard did not stop when interrupted")
					}
				})
				var url string
				require.Eventually(t, func() bool {
					m := regexp.MustCompile(`Dashboard: (http://\S+)`).FindStringSubmatch(out.String())
					if m != nil {
						url = m[1]
					}
					return m != nil
				}, 20*time.Second, 20*time.Millisecond, out.String())
				for _, path := range []string{"workflows", "metrics"} {
					resp, err := http.Get(url + path)
					require.NoError(t, err)
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					require.Equal(t, http.StatusOK, resp.StatusCode, path)
					require.Contains(t, string(body), "OnlyOnTheStandby", path)
				}
			})
		}
	})
}
