package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/internal/httpauth"
	"github.com/geneva-dev/geneva/promgeneva"
)

// metricsOptions are the metrics command's flags.
type metricsOptions struct {
	addr        string
	credentials credentialFlags
	readURL     string

	guard *httpauth.Guard
}

func newMetricsCmd(opts *options) *cobra.Command {
	mo := &metricsOptions{}
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "Serve the engine's metrics to Prometheus at /metrics",
		Long: `Serve Geneva's engine metrics (the geneva.engine_metrics view: workflows by
type and state, paused workflows by error class, stuck executions, how far
behind each queue is, executions ended per outcome; with the views
geneva.awaiting_events and geneva.event_stats, workflows awaiting an event
and events sent, consumed and pending, per type and event) in the Prometheus
text format at http://ADDR/metrics, one query per scrape, until interrupted. For
deployments without geneva dashboard, which serves the same at /metrics.

It takes the dashboard's credentials. It listens on 127.0.0.1:9187 unless
--addr says otherwise, and refuses an address that is not a loopback one
without --token or --basic-auth (also read from $GENEVA_DASHBOARD_TOKEN and
$GENEVA_DASHBOARD_BASIC_AUTH). Prometheus sends them with its scrape
config's authorization (type Bearer) or basic_auth. Without either, it
answers only to the host names localhost, 127.0.0.1 and [::1] (against DNS
rebinding).

With --read-url (also read from $GENEVA_READ_URL) it reads from that
database, a hot standby say, instead of the database URL, which it then
does not need.`,
		Args: noArgs,
		// the flags are checked before connecting to the database
		PreRunE: func(cmd *cobra.Command, args []string) (err error) {
			mo.guard, err = mo.guardOf()
			return err
		},
		RunE: withReadEnv(opts, &mo.readURL, func() bool { return true }, func(ctx context.Context, env *environment, args []string) error {
			return serveMetrics(ctx, env, mo)
		}),
	}
	cmd.Flags().StringVar(&mo.addr, "addr", "127.0.0.1:9187", "address to listen on")
	envFlag(cmd.Flags(), &mo.readURL, "read-url", "GENEVA_READ_URL",
		"libpq URL of a database to read the metrics from, a hot standby (instead of the database URL)")
	mo.credentials.add(cmd)
	return cmd
}

// guardOf turns the flags into the server's credentials and checks that the
// address is loopback or protected.
func (mo *metricsOptions) guardOf() (*httpauth.Guard, error) {
	g := &httpauth.Guard{Cookie: "geneva_metrics_token", Name: "metrics server", Token: mo.credentials.token}
	var err error
	if g.BasicAuthUser, g.BasicAuthPassword, err = mo.credentials.basicAuthUser(); err != nil {
		return nil, err
	}
	if err := g.CheckAddr(mo.addr); err != nil {
		return nil, usageError{err}
	}
	return g, nil
}

func serveMetrics(ctx context.Context, env *environment, mo *metricsOptions) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promgeneva.Handler(env.reader()))
	listener, err := net.Listen("tcp", mo.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mo.guard.Handler(mux), ReadHeaderTimeout: 10 * time.Second}
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
