package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/promgeneva"
)

func newMetricsCmd(opts *options) *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "Serve the engine's metrics to Prometheus at /metrics",
		Long: `Serve Geneva's engine metrics (the geneva.engine_metrics view: workflows by
type and state, paused workflows by error class, stuck executions, how far
behind each queue is, executions ended per outcome) in the Prometheus text
format at http://ADDR/metrics, one query per scrape, until interrupted. For
deployments without geneva dashboard, which serves the same at /metrics.`,
		Args: noArgs,
		RunE: withEnv(opts, false, func(ctx context.Context, env *environment, args []string) error {
			return serveMetrics(ctx, env, addr)
		}),
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:9187", "address to listen on")
	return cmd
}

func serveMetrics(ctx context.Context, env *environment, addr string) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promgeneva.Handler(env.pool))
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	env.printf("serving metrics at http://%s/metrics\n", listener.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(listener) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("stopping the metrics server: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
