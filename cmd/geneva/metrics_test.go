package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := listener.Addr().String()
	require.NoError(t, listener.Close())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--database-url", url, "metrics", "--addr", addr}, &stdout, io.Discard)
	}()

	var body []byte
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, err = io.ReadAll(resp.Body)
		return err == nil && resp.StatusCode == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond)
	require.Contains(t, string(body), "geneva_scrape_error 0")

	cancel()
	require.NoError(t, <-done)
}
