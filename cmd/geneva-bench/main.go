// Command geneva-bench measures Geneva side by side with raw River on one
// machine, in one run: end-to-end steps per second and the ratio to River's
// jobs per second, step start latency at full load and at a steady offered
// load, create_workflow throughput, how create_workflow and the dashboard
// views cost as finished history grows, and the worker's peak memory.
//
//	go run ./cmd/geneva-bench            # a throwaway PostgreSQL, default sizes
//	go run ./cmd/geneva-bench -h         # the sizes and knobs
//
// It prints a table, writes it with the machine's description to
// bench/RESULTS.md, and ends with one summary line for scripts:
//
//	steps/s=… ratio_vs_river=… p99_lag_ms=…
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/internal/pgtemp"
)

type options struct {
	databaseURL   string
	workflows     int
	steps         int
	workers       int
	pool          int
	fetchCooldown time.Duration
	inlineSteps   int
	steadyRate    int
	steadyFor     time.Duration
	creates       int
	createConns   int
	growth        []int
	sweep         []int
	growthCreates int
	results       string
	profile       bool

	resumableIterations int
}

func main() {
	var (
		o      options
		child  string
		growth string
		sweep  string
	)
	flag.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "libpq URL of a database to use (its geneva schema is migrated); default: a throwaway server")
	flag.IntVar(&o.workflows, "workflows", 3000, "workflows in the throughput run")
	flag.IntVar(&o.steps, "steps", 5, "no-op steps per workflow")
	flag.IntVar(&o.workers, "workers", 24, "concurrent step slots of the worker (River MaxWorkers)")
	flag.IntVar(&o.pool, "pool", 30, "the worker's database connections")
	flag.StringVar(&sweep, "sweep", "8,16,24", "slots at which Geneva and River throughput are also measured, each with slots+6 connections (empty: no sweep)")
	flag.IntVar(&o.inlineSteps, "inline-steps", 0, "the worker's InlineSteps (0: its default; -1: every step through its own River job)")
	flag.DurationVar(&o.fetchCooldown, "fetch-cooldown", 5*time.Millisecond, "River's FetchCooldown in the workers (River's default is 100ms)")
	flag.IntVar(&o.steadyRate, "steady-rate", 500, "offered steps per second of the steady-load run")
	flag.DurationVar(&o.steadyFor, "steady-for", 10*time.Second, "how long the steady load is offered")
	flag.IntVar(&o.creates, "creates", 5000, "workflows created in each create_workflow run")
	flag.IntVar(&o.createConns, "create-conns", 4, "connections creating workflows at once")
	flag.StringVar(&growth, "growth", "0,100000,1000000", "finished workflows in the tables at each growth measurement")
	flag.IntVar(&o.growthCreates, "growth-creates", 500, "create_workflow calls timed at each growth size")
	flag.StringVar(&o.results, "results", "bench/RESULTS.md", "where to write the results (empty: nowhere); bench/NOTES.md, if there, is appended")
	flag.BoolVar(&o.profile, "profile", false, "load pg_stat_statements in the throwaway server and print the statements that took the most time in the Geneva throughput run")
	flag.IntVar(&o.resumableIterations, "resumable-iterations", 2000000, "iterations of the no-op resumable step (0: skip that run)")
	flag.StringVar(&child, "child", "", "internal: run a worker child process (geneva or river)")
	flag.Parse()

	if child != "" {
		err := runChild(childConfig{
			mode: child, databaseURL: o.databaseURL, maxWorkers: o.workers, poolSize: o.pool,
			steps: o.steps, fetchCooldown: o.fetchCooldown, inlineSteps: o.inlineSteps,
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "geneva-bench child:", err)
			os.Exit(1)
		}
		return
	}

	var err error
	if o.growth, err = parseInts(growth); err != nil {
		fmt.Fprintln(os.Stderr, "geneva-bench: -growth takes numbers:", err)
		os.Exit(2)
	}
	if o.sweep, err = parseInts(sweep); err != nil {
		fmt.Fprintln(os.Stderr, "geneva-bench: -sweep takes numbers:", err)
		os.Exit(2)
	}

	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "geneva-bench:", err)
		os.Exit(1)
	}
}

// parseInts parses a comma-separated list of numbers.
func parseInts(list string) ([]int, error) {
	var values []int
	for _, value := range strings.Split(list, ",") {
		if value = strings.TrimSpace(value); value == "" {
			continue
		}
		n, err := strconv.Atoi(value)
		if err != nil {
			return nil, err
		}
		values = append(values, n)
	}
	return values, nil
}

func run(ctx context.Context, o options) error {
	settings := map[string]string{
		"shared_buffers":  "512MB",
		"max_wal_size":    "4GB",
		"max_connections": "400",
	}
	throwaway := o.databaseURL == ""
	if o.profile {
		settings["shared_preload_libraries"] = "pg_stat_statements"
		settings["pg_stat_statements.track"] = "all"
	}
	if throwaway {
		server, err := pgtemp.Start(ctx, &pgtemp.Options{Settings: settings})
		if err != nil {
			return err
		}
		defer server.Stop()
		o.databaseURL = server.URL("postgres")
	}
	config, err := pgxpool.ParseConfig(o.databaseURL)
	if err != nil {
		return err
	}
	config.MaxConns = 20
	// The benchmark's own polling must not spawn parallel workers.
	config.ConnConfig.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := geneva.Migrate(ctx, pool, nil); err != nil {
		return err
	}

	b := &bench{o: o, pool: pool}
	b.r.machine, err = describeMachine(ctx, pool, throwaway)
	if err != nil {
		return err
	}
	b.r.options = o

	phases := []struct {
		name string
		run  func(context.Context) error
	}{
		{"throughput (Geneva)", b.throughput},
		{"throughput (raw River)", b.riverCeiling},
		{"slots sweep", b.sweep},
		{"steady load", b.steadyLoad},
		{"create_workflow", b.createThroughput},
		{"growth", b.growth},
		{"resumable steps", b.resumable},
	}
	for _, phase := range phases {
		fmt.Fprintf(os.Stderr, "geneva-bench: %s...\n", phase.name)
		start := time.Now()
		if err := phase.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", phase.name, err)
		}
		fmt.Fprintf(os.Stderr, "geneva-bench: %s done in %s\n", phase.name, time.Since(start).Round(time.Millisecond))
	}

	text := b.r.markdown()
	fmt.Print(text)
	if o.results != "" {
		if notes, err := os.ReadFile("bench/NOTES.md"); err == nil {
			text += "\n" + string(notes)
		}
		if err := os.WriteFile(o.results, []byte(text), 0o644); err != nil {
			return err
		}
	}
	fmt.Println(b.r.summary())
	return nil
}
