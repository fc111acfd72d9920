package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/dashboard"
	"github.com/geneva-dev/geneva/promgeneva"
)

// dashboardOptions are the dashboard command's flags.
type dashboardOptions struct {
	addr        string
	credentials credentialFlags
	metrics     bool
	prefix      string
	readOnly    bool
	readURL     string
	refresh     time.Duration

	cfg *dashboard.Config
}

// credentialFlags are the flags that give the dashboard and the metrics
// server their credentials, the same for both.
type credentialFlags struct {
	basicAuth string
	token     string
}

// add declares --token and --basic-auth on cmd (envFlag: their defaults
// come from the environment, and --help never shows them).
func (cf *credentialFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	envFlag(f, &cf.token, "token", "GENEVA_DASHBOARD_TOKEN",
		"require this token (open URL?token=TOKEN once, or send Authorization: Bearer TOKEN)")
	envFlag(f, &cf.basicAuth, "basic-auth", "GENEVA_DASHBOARD_BASIC_AUTH", "require HTTP basic authentication as USER:PASSWORD")
}

// basicAuthUser splits --basic-auth into its user and password.
func (cf *credentialFlags) basicAuthUser() (user, password string, err error) {
	if cf.basicAuth == "" {
		return "", "", nil
	}
	user, password, ok := strings.Cut(cf.basicAuth, ":")
	if !ok || user == "" {
		return "", "", usagef("--basic-auth takes USER:PASSWORD")
	}
	return user, password, nil
}

func newDashboardCmd(opts *options) *cobra.Command {
	do := &dashboardOptions{}
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve the web dashboard until interrupted",
		Long: `Serve the operator's web dashboard for the database until interrupted:
workflows by type and state, what is paused and why, what is stuck, how long
steps wait and run, and the verbs (pause, resume, cancel, skip, run now, and
bulk resume or cancel of a filtered set).

It listens on 127.0.0.1:8080 unless --addr says otherwise, and refuses an
address that is not a loopback one without --token or --basic-auth (also
read from $GENEVA_DASHBOARD_TOKEN and $GENEVA_DASHBOARD_BASIC_AUTH, which
keep them out of the process list). Without either, it answers only to the
host names localhost, 127.0.0.1 and [::1] (against DNS rebinding). With
--read-only it shows no action and refuses every one. The engine's metrics
for Prometheus are at /metrics (behind the same token or password), unless
--metrics=false.

With --read-url (also read from $GENEVA_READ_URL), the pages and the
metrics read from that database instead, a hot standby say, and the actions
still go to the database URL (the primary; a multi-host URL with
target_session_attrs=read-write finds it after a failover); with
--read-only too, the database URL is not needed. A standby's pages lag the
primary by its replication delay.`,
		Args: noArgs,
		// the flags are checked before connecting to the database
		PreRunE: func(cmd *cobra.Command, args []string) (err error) {
			do.cfg, err = do.config()
			return err
		},
		RunE: withReadEnv(opts, &do.readURL, func() bool { return do.readOnly }, func(ctx context.Context, env *environment, args []string) error {
			return runDashboard(ctx, env, do)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&do.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port)")
	f.BoolVar(&do.readOnly, "read-only", false, "show no action and refuse every one")
	envFlag(f, &do.readURL, "read-url", "GENEVA_READ_URL",
		"libpq URL of a database to read the pages and metrics from, a hot standby (actions still go to the database URL)")
	do.credentials.add(cmd)
	f.StringVar(&do.prefix, "prefix", "", "serve under this path, e.g. /geneva")
	f.BoolVar(&do.metrics, "metrics", true, "serve the engine's metrics for Prometheus at PREFIX/metrics (as geneva metrics does)")
	f.DurationVar(&do.refresh, "refresh", 5*time.Second, "how often pages refresh themselves (0: never)")
	return cmd
}

// config turns the flags into the dashboard's configuration and checks that
// the address is loopback or protected.
func (do *dashboardOptions) config() (*dashboard.Config, error) {
	cfg := &dashboard.Config{Prefix: do.prefix, ReadOnly: do.readOnly, Token: do.credentials.token, RefreshInterval: do.refresh}
	if do.refresh == 0 {
		cfg.RefreshInterval = -1
	}
	var err error
	if cfg.BasicAuthUser, cfg.BasicAuthPassword, err = do.credentials.basicAuthUser(); err != nil {
		return nil, err
	}
	if err := dashboard.CheckAddr(do.addr, cfg); err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

// runDashboard serves the dashboard until ctx ends.
func runDashboard(ctx context.Context, env *environment, do *dashboardOptions) error {
	cfg := do.cfg
	read := env.reader()
	if do.metrics {
		cfg.Metrics = promgeneva.Handler(read)
	}
	cfg.ReadPool = env.read
	// a database without Geneva's schema says so now, not on every page
	if _, err := read.Exec(ctx, "select from geneva.workflow_counts limit 1"); err != nil {
		return explain(err)
	}
	primary := env.pool
	if primary == nil { // --read-only with --read-url: no action to take
		primary = read
	}
	return dashboard.ListenAndServe(ctx, primary, do.addr, cfg, func(url string) {
		mode := ""
		if do.readOnly {
			mode = " (read-only)"
		}
		env.printf("Dashboard: %s%s — interrupt (Ctrl-C) to stop\n", url, mode)
	})
}
