// Command geneva-bench measures Geneva side by side with raw River on one
// machine, in one run, on a durable server (fsync, synchronous_commit and
// full_page_writes on) and again with those settings off: end-to-end steps
// per second at several numbers of slots, River's ceiling measured the way
// River's own benchmark does, what each step costs (commits, WAL bytes, CPU
// of the worker and of PostgreSQL), the wait events of the worker's busy
// backends, step start latency at full load and at a steady offered load,
// what a step that awaits an event costs (event sent → step started at a
// steady rate, and steps/s when 10,000 events are sent at once), what a
// concurrency limit costs (defined but never reached, and saturated) and
// whether a big group's backlog delays small groups (fairness), what one
// parent fanning out 10,000 children and joining them costs (fan-out),
// create_workflow throughput, how create_workflow and the dashboard views
// cost as finished history grows, and the worker's peak memory.
//
//	go run ./cmd/geneva-bench            # a throwaway PostgreSQL, the headline runs
//	go run ./cmd/geneva-bench -runs full # every run (-runs headline,limits: some)
//	go run ./cmd/geneva-bench -h         # the runs, sizes and knobs
//
// The headline runs (-runs headline, the default) are those
// docs/performance.md (and the README's sentence of it) and bench/NOTES.md's
// throughput bars quote: the sweep of slots durable and non-durable with
// River beside it, River's ceiling, batching's before, HTTP steps, the steady
// load and create_workflow's rates, a keyed send beside an unkeyed one: 8 minutes on a busy 2-core machine (bench/NOTES.md). The rest
// (awaits, limits, fairness, fan-out, keyed sends, growth as history grows, schedules,
// resumable steps, and the unbatched runs with every step its own job) are
// selected by name; all of them took 13 to 23 minutes on that machine.
//
// It prints a table, writes it with the machine's description to
// bench/RESULTS.md, and ends with one summary line for scripts:
//
//	durable_steps/s=… nondurable_steps/s=… river_ceiling_jobs/s=… ratio=… p99_lag_ms=…
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/internal/pgtemp"
)

type options struct {
	databaseURL    string
	workflows      int
	warmup         int
	steps          int
	workers        int
	pool           int
	fetchCooldown  time.Duration
	inlineSteps    int
	ownJobs        bool
	riverSlots     bool
	unbatched      bool
	durability     string
	ceilingJobs    int
	ceilingWorkers int
	ceilingPool    int
	genevaCeiling  bool
	sampleEvery    time.Duration
	steadyRate     int
	steadyFor      time.Duration
	creates        int
	createOneByOne bool
	createConns    int
	growth         []int
	sweep          []int
	growthCreates  int
	growthLive     bool
	// growthMoved: workflows of each growth size written into the live
	// tables and moved by housekeeping (timed), the rest straight into
	// history (-1: all moved); growthWorkflows and growthRuns: the claims
	// and ends timed at each size
	growthMoved     int
	growthWorkflows int
	growthRuns      int
	growthFillConns int
	schedules       int
	results         string
	profile         bool

	resumableIterations int

	awaitRate  int
	awaitFor   time.Duration
	awaitBurst int
	awaitConns int
	awaitPerTx int

	limitWorkflows int
	httpWorkflows  int
	limitGroups    int
	limitPairs     int
	fairBig        int
	fairGroups     int
	fairSmall      int

	fanoutChildren int
	fanoutParents  int
	fanoutRounds   int

	keyedWorkflows int
	keyedSends     int

	// cellsSeconds and cellsWorkflows size the cells run (cells.go)
	cellsSeconds   int
	cellsWorkflows int

	// unbatchedOwnJobs: the unbatched runs also with every step its own job
	unbatchedOwnJobs bool
	// runs are the runs -runs selected (selectRuns), in benchRuns' order
	runs []string
}

func main() {
	var (
		o         options
		child     string
		growth    string
		sweep     string
		poll      time.Duration
		await     bool
		limits    bool
		httpSteps bool
		fanout    bool
		runs      string
	)
	flag.StringVar(&runs, "runs", "headline", runsUsage())
	flag.StringVar(&o.databaseURL, "database-url", "", "libpq URL of a database to use (its geneva schema is migrated; its server's settings are left as they are, so only one durability is measured); default: from $DATABASE_URL, else a throwaway server")
	flag.IntVar(&o.workflows, "workflows", 3000, "workflows in each Geneva throughput run")
	flag.IntVar(&o.warmup, "warmup", 1000, "workflows of an unrecorded Geneva run at -workers slots before each durability's sweep, so that its first row does not alone pay for empty tables, cold caches and first plans (0: none)")
	flag.IntVar(&o.steps, "steps", 5, "no-op steps per workflow")
	flag.StringVar(&sweep, "sweep", "8,32,128", "slots (River MaxWorkers) at which Geneva and River throughput are measured, each with slots+6 connections")
	flag.IntVar(&o.workers, "workers", 32, "the slots whose run gives the full-load latencies and the peak memory (added to -sweep if missing); also the steady-load worker's")
	flag.IntVar(&o.pool, "pool", 0, "the worker's database connections (0: slots+6)")
	flag.IntVar(&o.inlineSteps, "inline-steps", 0, "the worker's InlineSteps (0: its default; -1: every step through its own River job)")
	flag.BoolVar(&o.ownJobs, "own-jobs", true, "also measure Geneva with every step through its own River job (InlineSteps -1) at each slot count")
	flag.BoolVar(&o.unbatched, "unbatched", true, "also measure Geneva with every step's end recorded alone (the completer's batch size forced to 1), with inline steps: the before of batching, in the same run")
	flag.BoolVar(&o.unbatchedOwnJobs, "unbatched-own-jobs", true, "with -unbatched and -own-jobs, also with every step its own job")
	flag.BoolVar(&o.riverSlots, "river-same-slots", true, "also measure raw River with the same slots and settings as Geneva at each slot count")
	flag.StringVar(&o.durability, "durability", "both", "which throwaway-server settings to measure: both (durable, then with fsync, synchronous_commit and full_page_writes off), durable, or nondurable")
	flag.IntVar(&o.ceilingJobs, "ceiling-jobs", 50000, "no-op jobs inserted beforehand for River's ceiling (0: skip it)")
	flag.IntVar(&o.ceilingWorkers, "ceiling-workers", 500, "River MaxWorkers for River's ceiling")
	flag.IntVar(&o.ceilingPool, "ceiling-pool", 10, "database connections of River's ceiling run")
	flag.BoolVar(&o.genevaCeiling, "geneva-ceiling", true, "also measure Geneva as River's ceiling is measured, at the sweep's most slots: the workflows created beforehand, timed by the database from the first step's start to the last one's end")
	flag.DurationVar(&o.sampleEvery, "sample-every", 10*time.Millisecond, "how often the wait events of the worker's active backends are sampled during throughput runs (0: never)")
	flag.DurationVar(&o.fetchCooldown, "fetch-cooldown", 5*time.Millisecond, "River's FetchCooldown in the workers (River's default is 100ms)")
	flag.IntVar(&o.steadyRate, "steady-rate", 500, "offered steps per second of the steady-load run")
	flag.DurationVar(&o.steadyFor, "steady-for", 10*time.Second, "how long the steady load is offered")
	flag.IntVar(&o.creates, "creates", 5000, "workflows created in each create_workflow run")
	flag.IntVar(&o.createConns, "create-conns", 4, "connections creating workflows at once")
	flag.BoolVar(&o.createOneByOne, "create-one-by-one", false, "create the runs' workflows one create_workflow call at a time, 100 a transaction (before create_workflows; default: create_workflows, 100 a call)")
	flag.StringVar(&growth, "growth", "0,100000,1000000", "finished workflows in the tables at each growth measurement")
	flag.IntVar(&o.growthCreates, "growth-creates", 500, "create_workflow calls timed at each growth size")
	flag.IntVar(&o.growthMoved, "growth-moved", 10000, "finished workflows of each growth size written into the live tables and moved into history by housekeeping's own rounds, timed (the growth rows' move); the rest are written straight into the history partitions as the move writes them, set-based, so that 10,000,000 take minutes (-1: every one through the live tables and the move, hours at 10,000,000)")
	flag.IntVar(&o.growthWorkflows, "growth-workflows", 2000, "workflows of -steps steps in the claims and ends timed at each growth size (a worker at -workers slots, as the headline's)")
	flag.IntVar(&o.growthFillConns, "growth-fill-conns", 2, "connections writing the growth run's history straight into the partitions at once (setup)")
	flag.IntVar(&o.growthRuns, "growth-runs", 3, "runs of -growth-workflows at each growth size (the best counts)")
	flag.BoolVar(&o.growthLive, "growth-live", false, "leave the growth run's finished workflows in the live tables (no housekeeping move into history: the tables as they were before docs/history.md), to compare")
	flag.IntVar(&o.schedules, "schedules", 10000, "schedules, none due, beside which fire_schedules is timed (also with none and 1,000; 0: skip it)")
	flag.StringVar(&o.results, "results", "bench/RESULTS.md", "where to write the results (empty: nowhere); bench/NOTES.md, if there, is appended")
	flag.BoolVar(&o.profile, "profile", false, "load pg_stat_statements in the throwaway server and print the statements that took the most time in the Geneva run at -workers slots")
	flag.IntVar(&o.resumableIterations, "resumable-iterations", 2000000, "iterations of the no-op resumable step (0: skip that run)")
	flag.IntVar(&o.awaitRate, "await-rate", 100, "events per second sent in the awaited-step steady run, at each durability (each starts one step by its own River job, as the steady-load run's default starts 100 workflows a second)")
	flag.DurationVar(&o.awaitFor, "await-for", 10*time.Second, "how long events are sent in the awaited-step steady run (0: skip that run)")
	flag.IntVar(&o.awaitBurst, "await-burst", 10000, "workflows whose awaited step gets its event at once, at each durability (0: skip that run)")
	flag.IntVar(&o.awaitConns, "await-conns", 4, "connections sending the -await-burst events at once")
	flag.IntVar(&o.awaitPerTx, "await-per-tx", 100, "events each transaction of the -await-burst run sends (one statement)")
	flag.IntVar(&o.limitWorkflows, "limit-workflows", 1000, "workflows in each limit run at -workers slots, at each durability: a concurrency limit defined but never reached, a saturated one, and the same workflows without limits run beside them (0: skip them)")
	flag.IntVar(&o.limitGroups, "limit-groups", 8, "groups of the saturated-limit run, each at most 2 steps in progress (0: skip that run)")
	flag.IntVar(&o.limitPairs, "limit-pairs", 3, "pairs of runs of each limit comparison (a limit never reached beside none; a saturated one beside each step its own job), each pair's first run alternating; the rows pool them and show each pair's figure")
	flag.IntVar(&o.fairBig, "fair-big", 5000, "workflows of the fairness run's big group, at each durability (0: skip that run)")
	flag.IntVar(&o.fairGroups, "fair-groups", 10, "small groups of the fairness run, created after the big one")
	flag.IntVar(&o.fairSmall, "fair-small", 10, "workflows of each small group of the fairness run")
	flag.IntVar(&o.fanoutChildren, "fanout-children", 10000, "children of one no-op step that one parent fans out and joins, at each durability, beside as many steps each its own job and as many one-step workflows without a parent (0: skip the fan-out runs)")
	flag.IntVar(&o.fanoutParents, "fanout-parents", 100, "parents, one after another, of the fan-out run that measures the join's latency (p50 / p99), sharing -fanout-children children (1: only the one parent's)")
	flag.IntVar(&o.fanoutRounds, "fanout-rounds", 3, "rounds of the fan-out runs' three timed spans (each step its own job, the one-step workflows without a parent, the one parent's children), their order rotated each round; the rows pool the rounds and show each round's ratio")
	flag.IntVar(&o.keyedWorkflows, "keyed-workflows", 1000, "workflows that receive the keyed-send run's events, at each durability (0: skip that run)")
	flag.IntVar(&o.keyedSends, "keyed-sends", 10000, "events sent in each half of each round of the keyed-send run: without keys, then with a key each (0: skip that run)")
	flag.IntVar(&o.cellsSeconds, "cells-seconds", 3, "seconds pgbench times each call of the cells run (bench/cells/run.sh -T; 0: skip it)")
	flag.IntVar(&o.cellsWorkflows, "cells-workflows", 500, "workflows of 5 no-op steps a side in the cells run's steps a second (bench/cells/run.sh -W)")
	flag.StringVar(&child, "child", "", "internal: run a worker child process (geneva or river)")
	flag.DurationVar(&poll, "fetch-poll-interval", 0, "internal: the child's FetchPollInterval (0: the larger of -fetch-cooldown and 10ms)")
	flag.BoolVar(&await, "child-await", false, "internal: the child's worker runs BenchAwait too")
	flag.BoolVar(&limits, "child-limits", false, "internal: the child's worker runs the limit runs' types too")
	flag.BoolVar(&httpSteps, "child-http", false, "internal: the child's worker runs HTTP steps too")
	flag.BoolVar(&fanout, "child-fanout", false, "internal: the child's worker runs the fan-out runs' types too")
	flag.IntVar(&o.httpWorkflows, "http-workflows", 1000, "workflows of -steps HTTP steps (to a local endpoint) in the HTTP-step run at -workers slots, at each durability, beside as many of no-op Go steps (0: skip it)")
	flag.Parse()
	if o.databaseURL == "" { // (not the flag's default: -h would print its password)
		o.databaseURL = os.Getenv("DATABASE_URL")
	}

	if child != "" {
		err := runChild(childConfig{
			mode: child, databaseURL: o.databaseURL, maxWorkers: o.workers, poolSize: o.pool,
			steps: o.steps, fetchCooldown: o.fetchCooldown, fetchPollInterval: poll, inlineSteps: o.inlineSteps,
			await: await, limits: limits, http: httpSteps, fanout: fanout,
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
	if !slices.Contains(o.sweep, o.workers) {
		o.sweep = append(o.sweep, o.workers)
		slices.Sort(o.sweep)
	}
	if o.runs, err = selectRuns(&o, runs); err != nil {
		fmt.Fprintln(os.Stderr, "geneva-bench:", err)
		os.Exit(2)
	}
	switch o.durability {
	case "both", "durable", "nondurable":
	default:
		fmt.Fprintln(os.Stderr, "geneva-bench: -durability is both, durable or nondurable")
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
	start := time.Now()
	// The throwaway server starts durable; setDurability switches it.
	settings := map[string]string{
		"shared_buffers":     "512MB",
		"max_wal_size":       "4GB",
		"max_connections":    "400",
		"fsync":              "on",
		"synchronous_commit": "on",
		"full_page_writes":   "on",
		// The WAL flushes' time, for the cost table.
		"track_wal_io_timing": "on",
	}
	throwaway := o.databaseURL == ""
	if o.profile {
		settings["shared_preload_libraries"] = "pg_stat_statements"
		settings["pg_stat_statements.track"] = "all"
	}
	b := &bench{o: o}
	if throwaway {
		server, err := pgtemp.Start(ctx, &pgtemp.Options{Settings: settings})
		if err != nil {
			return err
		}
		defer server.Stop()
		// The runs use a database of their own, and the wait-event sampler
		// another, so that its queries do not count as the runs' commits.
		admin, err := pgx.Connect(ctx, server.URL("postgres"))
		if err != nil {
			return err
		}
		_, err = admin.Exec(ctx, "create database bench")
		admin.Close(ctx)
		if err != nil {
			return err
		}
		b.o.databaseURL, b.samplerURL = server.URL("bench"), server.URL("postgres")
	}
	config, err := pgxpool.ParseConfig(b.o.databaseURL)
	if err != nil {
		return err
	}
	config.MaxConns = 20
	// The benchmark's own polling must not spawn parallel workers.
	config.ConnConfig.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	config.ConnConfig.RuntimeParams["application_name"] = benchApplication
	b.pool, err = pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		return err
	}
	defer b.pool.Close()
	config = config.Copy()
	config.MaxConns = 2
	config.ConnConfig.RuntimeParams["application_name"] = pollsApplication
	if b.polls, err = pgxpool.NewWithConfig(ctx, config); err != nil {
		return err
	}
	defer b.polls.Close()
	if _, err := geneva.Migrate(ctx, b.pool, nil); err != nil {
		return err
	}
	if err := b.define(ctx); err != nil {
		return err
	}

	b.r.machine, err = describeMachine(ctx, b.pool, throwaway)
	if err != nil {
		return err
	}
	b.r.options = b.o

	// Which durabilities are measured: a server given by URL only as it is.
	var profiles []*profileResults
	if throwaway {
		if o.durability != "nondurable" {
			profiles = append(profiles, &profileResults{name: "durable", durable: true, set: true})
		}
		if o.durability != "durable" {
			profiles = append(profiles, &profileResults{name: "non-durable", durable: false, set: true})
		}
	} else {
		durable, err := serverIsDurable(ctx, b.pool)
		if err != nil {
			return err
		}
		name := "non-durable"
		if durable {
			name = "durable"
		}
		profiles = append(profiles, &profileResults{name: name + " (the server as configured)", durable: durable})
	}
	b.r.profiles = profiles

	type phase struct {
		name string
		run  func(context.Context) error
	}
	var phases []phase
	for _, p := range profiles {
		phases = append(phases, phase{"throughput, " + p.name, func(ctx context.Context) error { return b.throughput(ctx, p) }})
	}
	// The rest runs on the first (durable) settings again.
	phases = append(phases,
		phase{"steady load", func(ctx context.Context) error {
			if o.steadyFor <= 0 || o.steadyRate <= 0 {
				return nil
			}
			if profiles[0].set && len(profiles) > 1 {
				if err := b.setDurability(ctx, profiles[0].durable); err != nil {
					return err
				}
			}
			return b.steadyLoad(ctx)
		}},
		phase{"create_workflow", b.createThroughput},
		phase{"cells", b.cells},
		phase{"growth", b.growth},
		phase{"fire_schedules", b.fireSchedules},
		// The resumable-step runs count round trips; on a throwaway server
		// they run non-durable, as before this benchmark measured durably
		// (a write per Set would otherwise wait for a WAL flush each).
		phase{"resumable steps", func(ctx context.Context) error {
			if profiles[0].set && o.resumableIterations > 0 {
				if err := b.setDurability(ctx, false); err != nil {
					return err
				}
				b.r.resumableNondurable = true
			}
			return b.resumable(ctx)
		}},
	)
	for _, phase := range phases {
		fmt.Fprintf(os.Stderr, "geneva-bench: %s...\n", phase.name)
		start := time.Now()
		if err := phase.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", phase.name, err)
		}
		fmt.Fprintf(os.Stderr, "geneva-bench: %s done in %s\n", phase.name, time.Since(start).Round(time.Millisecond))
	}
	b.r.took = time.Since(start)

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

// serverIsDurable says whether a server commits durably: fsync,
// synchronous_commit and full_page_writes on.
func serverIsDurable(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	var durable bool
	err := pool.QueryRow(ctx, `select current_setting('fsync') = 'on'
		and current_setting('synchronous_commit') <> 'off'
		and current_setting('full_page_writes') = 'on'`).Scan(&durable)
	return durable, err
}

// setDurability turns fsync, synchronous_commit and full_page_writes on or
// off in the throwaway server (all three take effect on a reload) and waits
// until new connections see it.
func setDurability(ctx context.Context, pool *pgxpool.Pool, durable bool) error {
	value := "off"
	if durable {
		value = "on"
	}
	for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		if _, err := pool.Exec(ctx, fmt.Sprintf("alter system set %s = %s", name, value)); err != nil {
			return err
		}
	}
	if _, err := pool.Exec(ctx, "select pg_reload_conf()"); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pool.Reset()
		is, err := serverIsDurable(ctx, pool)
		if err != nil {
			return err
		}
		var fsync string
		if err := pool.QueryRow(ctx, "show fsync").Scan(&fsync); err != nil {
			return err
		}
		if is == durable && (fsync == "on") == durable {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server's durability settings did not change to %s", value)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
