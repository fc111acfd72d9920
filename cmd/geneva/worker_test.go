package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// lockedBuffer is the output of a command running in a goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// geneva worker refuses the loopback address unless --allow-hosts (or
// GENEVA_HTTP_ALLOW_HOSTS) allows it, and signs with GENEVA_HTTP_SECRET and
// GENEVA_HTTP_SECRET_NEXT, which its help never shows.
func TestWorker(t *testing.T) {
	t.Setenv("GENEVA_HTTP_SECRET", "current-secret-value")
	t.Setenv("GENEVA_HTTP_SECRET_NEXT", "next-secret-value")
	t.Setenv("GENEVA_HTTP_ALLOW_HOSTS", "")

	out, err := cli(t, "", "worker", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "--allow-hosts")
	require.Contains(t, out, "GENEVA_HTTP_SECRET_NEXT")
	require.NotContains(t, out, "secret-value")

	url := migrated(t)
	var verified atomic.Int32
	var endpoint *httptest.Server
	endpoint = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		// (its own URL, not its Host's)
		header, own := r.Header.Get("Geneva-Signature"), endpoint.URL+r.URL.RequestURI()
		for _, secret := range []string{"current-secret-value", "next-secret-value"} {
			if !worker.VerifySignature(header, r.Method, own, body, []byte(secret), time.Now(), 5*time.Minute) {
				http.Error(w, "bad signature", http.StatusUnauthorized)
				return
			}
		}
		verified.Add(1)
	}))
	t.Cleanup(endpoint.Close)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(ctx) })
	client := goclient.New(conn)
	require.NoError(t, client.DefineWorkflow(ctx, "Hook", json.RawMessage(
		`{"steps": [{"name": "notify", "http": {"url": "`+endpoint.URL+`/notify", "timeout": 5}}]}`)))

	// runs geneva worker with args until the workflow it creates is no
	// longer ready or performing, and returns the workflow and the output
	hero := 0
	runWorker := func(args ...string) (*goclient.Workflow, string) {
		t.Helper()
		hero++
		id, err := client.CreateWorkflow(ctx, "Hook", "Team", fmt.Sprint(hero), nil)
		require.NoError(t, err)
		var output lockedBuffer
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- run(runCtx, append([]string{"--database-url", url, "worker"}, args...), &output, &output)
		}()
		var workflow *goclient.Workflow
		require.Eventually(t, func() bool {
			workflow, err = client.GetWorkflow(ctx, id)
			require.NoError(t, err)
			return workflow.State != goclient.StateReady && workflow.State != goclient.StatePerforming
		}, 30*time.Second, 20*time.Millisecond, "workflow %d; the worker's output:\n%s", id, &output)
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, output.String())
		case <-time.After(30 * time.Second):
			t.Fatalf("geneva worker did not stop:\n%s", output.String())
		}
		return workflow, output.String()
	}
	lastError := func(id int64) string {
		var class string
		require.NoError(t, conn.QueryRow(ctx, `select error_class_name from geneva.step_executions
			where workflow_id = $1 order by id desc limit 1`, id).Scan(&class))
		return class
	}

	workflow, output := runWorker()
	require.Equal(t, goclient.StatePaused, workflow.State)
	require.Equal(t, "http.destination_refused", lastError(workflow.ID))
	require.Contains(t, output, "requests signed with the secret and the next one, to public addresses only (--allow-hosts allows others)")
	require.Zero(t, verified.Load())

	workflow, output = runWorker("--allow-hosts", "127.0.0.1")
	require.Equal(t, goclient.StateFinished, workflow.State, output)
	require.Contains(t, output, "to public addresses and 127.0.0.1.")
	require.Equal(t, int32(1), verified.Load())

	t.Setenv("GENEVA_HTTP_ALLOW_HOSTS", "hooks.internal, 127.0.0.0/8")
	workflow, output = runWorker()
	require.Equal(t, goclient.StateFinished, workflow.State, output)
	require.Contains(t, output, "to public addresses and hooks.internal, 127.0.0.0/8.")
	require.Equal(t, int32(2), verified.Load())

	_, err = cli(t, url, "worker", "--allow-hosts", "http://127.0.0.1")
	require.ErrorContains(t, err, `"http://127.0.0.1" is not a host name, an IP address, a CIDR block or "*"`)
}
