package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

type results struct {
	machine string
	options options
	took    time.Duration

	profiles []*profileResults

	steadyOffered  int
	steadyAchieved float64
	steady         latencyPair

	createsOnePerTx     float64
	createsHundredPerTx float64
	createsHundredACall float64

	growth []growthRow

	schedules []scheduleRow

	cells cellsResults

	resumable           resumableResult
	resumableNondurable bool // the resumable-step runs ran with durability off
}

// profileResults are the throughput runs at one durability.
type profileResults struct {
	name    string
	durable bool
	set     bool // the benchmark set the server's durability (a throwaway server)

	ceiling  runStats
	sweep    []sweepRow
	fullLoad latencyPair // of Geneva's run at -workers slots
	await    awaitResults
	limits   limitResults
	fanout   fanoutResults
	keyed    keyedResults
	http     httpResults

	// genevaCeiling and genevaCeilingOwnJobs are Geneva measured as River's
	// ceiling is (genevaCeilingRun), with inline steps and with every step its
	// own job.
	genevaCeiling, genevaCeilingOwnJobs runStats
}

// sweepRow is the throughput of Geneva (inline steps, and every step through
// its own River job) and of raw River at one number of slots.
type sweepRow struct {
	slots                  int
	geneva, ownJobs, river runStats
	// unbatched and unbatchedOwnJobs are Geneva's runs with every step's end
	// recorded alone (the completer's batch size 1): batching's before
	unbatched, unbatchedOwnJobs runStats
}

// best is the sweep's best Geneva run (zero without a sweep).
func (p *profileResults) best() sweepRow {
	var best sweepRow
	for _, row := range p.sweep {
		if row.geneva.rate() > best.geneva.rate() {
			best = row
		}
	}
	return best
}

// main is the sweep's run at -workers slots.
func (p *profileResults) main(workers int) sweepRow {
	for _, row := range p.sweep {
		if row.slots == workers {
			return row
		}
	}
	return sweepRow{}
}

// profile returns the results at one durability (nil when not measured).
func (r *results) profile(durable bool) *profileResults {
	for _, p := range r.profiles {
		if p.durable == durable {
			return p
		}
	}
	return nil
}

type growthRow struct {
	size   int
	create latency
	views  []viewTime
	// the fill: workflows written straight into history and in how long,
	// workflows moved by housekeeping and in how long, the database's size
	direct, moved        int
	directTook, moveTook time.Duration
	dbBytes              int64
	// claims and ends: the best run's steps/s, and the runs' median
	// PostgreSQL CPU a step (µs; 0 when it cannot be seen)
	steps, cpuPerStep float64
	// the same on a database of the same server whose history is empty,
	// run beside them (0: none)
	refSteps, refCPUPerStep float64
	refCreate               latency
}

type viewTime struct {
	name string
	took time.Duration
}

// summary is the last line, for scripts: Geneva's steps/s at its best number
// of slots on the durable and the non-durable server, River's ceiling on the
// durable server, their ratio, and the p99 start lag at the steady load of
// the steps started by their own River job (inline steps start with no lag,
// and counting them would hide the lag of the rest). A figure not measured
// is "-".
func (r *results) summary() string {
	figure := func(v float64) string {
		if v <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f", v)
	}
	durableSteps, nondurableSteps, ceiling, ratio := "-", "-", "-", "-"
	if p := r.profile(true); p != nil {
		durableSteps, ceiling = figure(p.best().geneva.rate()), figure(p.ceiling.rate())
		if p.ceiling.rate() > 0 && p.best().geneva.rate() > 0 {
			ratio = fmt.Sprintf("%.2f", p.best().geneva.rate()/p.ceiling.rate())
		}
	}
	if p := r.profile(false); p != nil {
		nondurableSteps = figure(p.best().geneva.rate())
	}
	return fmt.Sprintf("durable_steps/s=%s nondurable_steps/s=%s river_ceiling_jobs/s=%s ratio=%s p99_lag_ms=%.1f",
		durableSteps, nondurableSteps, ceiling, ratio, r.steady.jobLag.p99)
}

func (r *results) markdown() string {
	var b strings.Builder
	o := r.options
	fmt.Fprintf(&b, "# Geneva benchmark\n\n%s\n", r.machine)
	fmt.Fprintf(&b, "Run with `go run ./cmd/geneva-bench -runs %s -durability %s -workflows %d -warmup %d -steps %d -sweep %s -workers %d -pool %d -inline-steps %d -own-jobs=%t -unbatched=%t -unbatched-own-jobs=%t -river-same-slots=%t -ceiling-jobs %d -ceiling-workers %d -ceiling-pool %d -geneva-ceiling=%t -sample-every %s -fetch-cooldown %s -steady-rate %d -steady-for %s -creates %d -create-conns %d -growth %s -growth-moved %d -growth-workflows %d -growth-runs %d -schedules %d -http-workflows %d -resumable-iterations %d -await-rate %d -await-for %s -await-burst %d -await-conns %d -await-per-tx %d -limit-workflows %d -limit-groups %d -limit-pairs %d -fair-big %d -fair-groups %d -fair-small %d -fanout-children %d -fanout-parents %d -fanout-rounds %d -keyed-workflows %d -keyed-sends %d -cells-seconds %d -cells-workflows %d` on %s; the whole run took %s.\n\n",
		runsText(o.runs), o.durability, o.workflows, o.warmup, o.steps, listArg(o.sweep), o.workers, o.pool, o.inlineSteps, o.ownJobs, o.unbatched, o.unbatchedOwnJobs, o.riverSlots,
		o.ceilingJobs, o.ceilingWorkers, o.ceilingPool, o.genevaCeiling, o.sampleEvery, o.fetchCooldown, o.steadyRate, o.steadyFor,
		o.creates, o.createConns, listArg(o.growth), o.growthMoved, o.growthWorkflows, o.growthRuns, o.schedules, o.httpWorkflows, o.resumableIterations, o.awaitRate, o.awaitFor, o.awaitBurst, o.awaitConns, o.awaitPerTx,
		o.limitWorkflows, o.limitGroups, o.limitPairs, o.fairBig, o.fairGroups, o.fairSmall, o.fanoutChildren, o.fanoutParents, o.fanoutRounds, o.keyedWorkflows, o.keyedSends, o.cellsSeconds, o.cellsWorkflows, time.Now().UTC().Format("2006-01-02 15:04 MST"), r.took.Round(time.Second))

	// Throughput: one column per durability.
	switched := " (the server given, as configured)"
	if r.profiles[0].set {
		switched = " (the benchmark turns all three off in the same server and reloads it)"
	}
	b.WriteString("## Throughput\n\n")
	fmt.Fprintf(&b, "Each Geneva run creates %d workflows × %d no-op steps at once (%s) and waits until they are finished; "+
		"each raw River run inserts as many no-op jobs while the worker runs (River's InsertManyFast, 5000 a call). A run's worker has slots + 6 connections. "+
		"Geneva's worker runs a workflow's next step in the same job when it is due at once (Config.InlineSteps); "+
		"\"each step its own job\" turns that off. The worker records the ends of steps that finish close together in one transaction (its completer, geneva.complete_steps); "+
		"\"unbatched (before)\" forces its batch size to 1, one transaction per step's end, as before batching. River's ceiling is measured as River's own benchmark measures it: "+
		"%d no-op jobs inserted in bulk beforehand, one client with %d workers, FetchCooldown 2 ms, FetchPollInterval 20 ms, "+
		"River's batching completer; its time runs from the first job's start to the last one's end. "+
		"\"Geneva measured as River's ceiling is\" does the same for Geneva at the sweep's most slots: the workflows created beforehand (their time, CPU and WAL not counted), the time from the first step's start to the last one's end. "+
		"Durable: fsync, synchronous_commit and full_page_writes on; non-durable: not all three on%s. "+
		"Every run starts after a VACUUM and a CHECKPOINT; before each column's first, an unrecorded Geneva run of %d workflows warms the tables, caches and plans.\n\n",
		o.workflows, o.steps, createdHow(o), o.ceilingJobs, o.ceilingWorkers, switched, o.warmup)
	b.WriteString("| run |")
	for _, p := range r.profiles {
		fmt.Fprintf(&b, " %s |", p.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(r.profiles)) + "\n")
	row := func(label string, value func(p *profileResults) string) {
		fmt.Fprintf(&b, "| %s |", label)
		for _, p := range r.profiles {
			fmt.Fprintf(&b, " %s |", value(p))
		}
		b.WriteString("\n")
	}
	if o.ceilingJobs > 0 {
		row("River's ceiling, jobs/s", func(p *profileResults) string { return fmt.Sprintf("**%.0f**", p.ceiling.rate()) })
	}
	for i, slots := range o.sweep {
		row(fmt.Sprintf("Geneva, %d slots, steps/s", slots), func(p *profileResults) string { return rate(p, i, func(s sweepRow) runStats { return s.geneva }) })
		if o.ownJobs {
			row(fmt.Sprintf("Geneva, %d slots, each step its own job, steps/s", slots), func(p *profileResults) string { return rate(p, i, func(s sweepRow) runStats { return s.ownJobs }) })
		}
		if o.unbatched {
			row(fmt.Sprintf("Geneva, %d slots, unbatched (before), steps/s", slots), func(p *profileResults) string { return rate(p, i, func(s sweepRow) runStats { return s.unbatched }) })
			if o.ownJobs && o.unbatchedOwnJobs {
				row(fmt.Sprintf("Geneva, %d slots, each step its own job, unbatched (before), steps/s", slots), func(p *profileResults) string {
					return rate(p, i, func(s sweepRow) runStats { return s.unbatchedOwnJobs })
				})
			}
		}
		if o.riverSlots {
			row(fmt.Sprintf("raw River, %d slots, jobs/s", slots), func(p *profileResults) string { return rate(p, i, func(s sweepRow) runStats { return s.river }) })
		}
	}
	if len(o.sweep) > 0 {
		row("Geneva at its best", func(p *profileResults) string {
			best := p.best()
			return fmt.Sprintf("**%.0f** (%d slots)", best.geneva.rate(), best.slots)
		})
	}
	if o.ceilingJobs > 0 && len(o.sweep) > 0 {
		row("Geneva at its best ÷ River's ceiling", func(p *profileResults) string {
			if p.ceiling.rate() == 0 {
				return "—"
			}
			return fmt.Sprintf("**%.2f**", p.best().geneva.rate()/p.ceiling.rate())
		})
	}
	if o.genevaCeiling && len(o.sweep) > 0 {
		slots := slices.Max(o.sweep)
		ceilingRow := func(label string, s func(p *profileResults) runStats) {
			row(fmt.Sprintf("Geneva measured as River's ceiling is, %d slots%s, steps/s", slots, label), func(p *profileResults) string {
				if s(p).units == 0 {
					return "—"
				}
				return fmt.Sprintf("%.0f", s(p).rate())
			})
			if o.ceilingJobs > 0 {
				row(fmt.Sprintf("… ÷ River's ceiling%s", label), func(p *profileResults) string {
					if p.ceiling.rate() == 0 || s(p).units == 0 {
						return "—"
					}
					return fmt.Sprintf("**%.2f**", s(p).rate()/p.ceiling.rate())
				})
			}
		}
		ceilingRow("", func(p *profileResults) runStats { return p.genevaCeiling })
		if o.ownJobs {
			ceilingRow(", each step its own job", func(p *profileResults) runStats { return p.genevaCeilingOwnJobs })
		}
	}
	awaitSteady, awaitBurst := o.awaitRate > 0 && o.awaitFor > 0, o.awaitBurst > 0
	if awaitBurst {
		row(fmt.Sprintf("awaited step, %d events at once, %d slots, steps/s", o.awaitBurst, o.workers), func(p *profileResults) string {
			if p.await.burst.units == 0 {
				return "—"
			}
			return fmt.Sprintf("%.0f", p.await.burst.rate())
		})
	}
	if awaitSteady {
		row(fmt.Sprintf("awaited step, event sent → step started, %d events/s, p50 / p99 (ms)", o.awaitRate), func(p *profileResults) string {
			if p.await.started.n == 0 {
				return "—"
			}
			return fmt.Sprintf("%.1f / %.1f", p.await.started.p50, p.await.started.p99)
		})
	}
	limitRows(o, row)
	httpRows(o, row)
	fanoutRows(o, row)
	keyedRows(o, row)
	b.WriteString("\n")
	if awaitSteady || awaitBurst {
		b.WriteString(awaitProse(o))
	}
	b.WriteString(limitsProse(o))
	b.WriteString(fanoutProse(o))
	b.WriteString(keyedProse(o))

	// Cost per step and wait events, one table per durability.
	for _, p := range r.profiles {
		var rows strings.Builder
		cost := func(label string, s runStats) {
			if s.units == 0 {
				return
			}
			server := "n/a"
			if s.serverCPU > 0 {
				server = fmt.Sprintf("%.3f", s.cpuPerUnit(s.serverCPU))
			}
			rest := s.machineCPU - s.workerCPU - s.serverCPU
			busy := 100 * s.busy()
			active := 0.0
			if s.ticks > 0 {
				active = float64(s.seen) / float64(s.ticks)
			}
			fmt.Fprintf(&rows, "| %s | %.0f | %.2f | %s | %s | %.3f / %s / %.3f | %.0f%% | %.1f | %s |\n",
				label, s.rate(), s.commitsPerUnit(), s.walText(), s.walSyncsText(), s.cpuPerUnit(s.workerCPU), server, s.cpuPerUnit(rest),
				busy, active, s.topWaits())
		}
		if o.ceilingJobs > 0 {
			cost(fmt.Sprintf("River's ceiling (%d workers)", o.ceilingWorkers), p.ceiling)
		}
		for _, row := range p.sweep {
			cost(fmt.Sprintf("Geneva, %d slots", row.slots), row.geneva)
			cost(fmt.Sprintf("Geneva, %d slots, each step its own job", row.slots), row.ownJobs)
			cost(fmt.Sprintf("Geneva, %d slots, unbatched (before)", row.slots), row.unbatched)
			cost(fmt.Sprintf("Geneva, %d slots, each step its own job, unbatched (before)", row.slots), row.unbatchedOwnJobs)
			cost(fmt.Sprintf("raw River, %d slots", row.slots), row.river)
		}
		if o.genevaCeiling && len(o.sweep) > 0 {
			cost(fmt.Sprintf("Geneva measured as River's ceiling is, %d slots", slices.Max(o.sweep)), p.genevaCeiling)
			cost(fmt.Sprintf("Geneva measured as River's ceiling is, %d slots, each step its own job", slices.Max(o.sweep)), p.genevaCeilingOwnJobs)
		}
		cost(fmt.Sprintf("awaited step, %d events at once, %d slots (the sends included)", o.awaitBurst, o.workers), p.await.burst)
		limitCosts(o, p, cost)
		fanoutCosts(o, p, cost)
		if rows.Len() == 0 {
			continue
		}
		fmt.Fprintf(&b, "## Cost per step and wait events, %s\n\n", p.name)
		b.WriteString("Commits: the database's `xact_commit` over the run, less the benchmark's own polls; WAL: `pg_current_wal_insert_lsn` over the run, and in brackets the full-page images among it a step (`pg_stat_wal.wal_fpi`, the whole server's: a page's first change after the checkpoint each run starts with writes the whole page); " +
			"WAL flushes: `pg_stat_wal.wal_sync` over the run (the whole server's; none when fsync is off), with their mean time when `track_wal_io_timing` is on (it is in the throwaway server); " +
			"CPU: the worker process, PostgreSQL's processes (postmaster, background processes such as autovacuum's, and backends, but the measurement's own: its polls and the wait-event sampler; the workflows' creation is counted), and everything else on the machine (this benchmark and those backends, other work), per step or job; " +
			"machine busy: the share of all cores busy over the run, whoever used them. " +
			"Waits: the wait events of the worker's active backends in `pg_stat_activity`, sampled every " + o.sampleEvery.String() +
			" from another connection, as shares of all samples (\"CPU\" is an active backend with no wait event); \"backends\" is the mean number active.\n\n")
		b.WriteString("| run | per s | commits/step | WAL bytes/step (full-page images) | WAL flushes/step | CPU ms/step: worker / PostgreSQL / rest | machine busy | backends | top five waits |\n|---|---|---|---|---|---|---|---|---|\n")
		b.WriteString(rows.String())
		b.WriteString("\n")
	}

	// The latencies and the rest: the rows of the runs that ran.
	var rest strings.Builder
	for _, p := range r.profiles {
		if p.fullLoad.lag.n == 0 {
			continue
		}
		fmt.Fprintf(&rest, "| start lag (scheduled → started), full load, %d slots, %s | %s |\n", o.workers, p.name, p.fullLoad.lag)
		fmt.Fprintf(&rest, "| start lag of the steps started by their own River job, full load, %s | %s |\n", p.name, p.fullLoad.jobLag)
		fmt.Fprintf(&rest, "| step gap (one step ends → next starts), full load, %s | %s |\n", p.name, p.fullLoad.gap)
	}
	for _, p := range r.profiles {
		a := p.await
		if a.started.n > 0 {
			fmt.Fprintf(&rest, "| awaited step, event sent (send_event's commit, as its sender sees it) → step started, %d events/s offered (%.0f achieved), %d slots, %s | %s |\n",
				a.offered, a.achieved, o.workers, p.name, a.started)
			fmt.Fprintf(&rest, "| send_event, one per transaction, at that load, %s | %s |\n", p.name, a.send)
		}
		if a.burst.units > 0 {
			fmt.Fprintf(&rest, "| %d events at once, %d connections, %d a transaction, %s: sending them | %.2f s (%.0f events/s) |\n",
				a.burst.units, o.awaitConns, o.awaitPerTx, p.name, a.burstSend.Seconds(), float64(a.burst.units)/a.burstSend.Seconds())
		}
	}
	settings := r.profiles[0].name
	if r.steady.lag.n > 0 {
		fmt.Fprintf(&rest, "| steady load (%s, %d slots): offered %d steps/s, achieved | %.0f steps/s |\n", settings, o.workers, r.steadyOffered, r.steadyAchieved)
		fmt.Fprintf(&rest, "| start lag, steady load | %s |\n", r.steady.lag)
		fmt.Fprintf(&rest, "| start lag of the steps started by their own River job, steady load | %s |\n", r.steady.jobLag)
		fmt.Fprintf(&rest, "| step gap, steady load | %s |\n", r.steady.gap)
	}
	if r.createsOnePerTx > 0 {
		fmt.Fprintf(&rest, "| create_workflow, one per transaction, %d connections (%s) | %.0f /s |\n", o.createConns, settings, r.createsOnePerTx)
		fmt.Fprintf(&rest, "| create_workflow, 100 per transaction, %d connections (%s) | %.0f /s |\n", o.createConns, settings, r.createsHundredPerTx)
		fmt.Fprintf(&rest, "| create_workflows, 100 a call (one statement and transaction), %d connections (%s) | %.0f /s |\n", o.createConns, settings, r.createsHundredACall)
	}
	if mainRow := r.profiles[0].main(o.workers); mainRow.geneva.rss > 0 {
		river := "—"
		if mainRow.river.rss > 0 {
			river = mib(mainRow.river.rss)
		}
		fmt.Fprintf(&rest, "| worker peak RSS at %d slots: Geneva / raw River | %s / %s |\n", o.workers, mib(mainRow.geneva.rss), river)
	}
	if rest.Len() > 0 {
		b.WriteString("## Latency and the rest\n\n| measure | value |\n|---|---|\n")
		b.WriteString(rest.String())
		b.WriteString("\n")
	}

	b.WriteString(r.growthMarkdown(o, settings))
	b.WriteString(r.cells.markdown(o, settings))
	b.WriteString(r.schedulesMarkdown(settings))
	b.WriteString(r.resumable.markdown())
	if r.resumableNondurable && len(r.resumable.rows) > 0 {
		b.WriteString("The resumable-step runs ran on the server with fsync, synchronous_commit and full_page_writes off.\n\n")
	}
	fmt.Fprintf(&b, "```\n%s\n```\n", r.summary())
	return b.String()
}

// awaitProse says how the awaited-step rows were measured.
func awaitProse(o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The awaited-step rows measure a step that awaits an event (`StepOpts.Await`): a workflow of one no-op step awaiting the event \"go\" for up to an hour, "+
		"whose River job is scheduled for the timeout until the event brings it forward. Every workflow of a run is created and awaits its event (`geneva.awaiting_events` lists it) "+
		"before a worker with %d slots starts and the first event is sent; both runs follow the column's throughput runs, on its settings. The event makes the step due in the sender's transaction, and its own River job starts it (never inline), "+
		"so compare these rows with \"each step its own job\".", o.workers)
	if o.awaitRate > 0 && o.awaitFor > 0 {
		fmt.Fprintf(&b, " Event sent → step started: %d workflows' events sent at %d a second, one per transaction (`goclient` `SendEvent`, `select geneva.send_event(...)`), "+
			"from up to eight connections at once; the time runs from the moment the sender's call returns (its commit) to the step's `started_at` "+
			"(when the worker's `start_steps` transaction began); the latency table has the whole distribution and `send_event`'s own time.",
			int(float64(o.awaitRate)*o.awaitFor.Seconds()), o.awaitRate)
	}
	if o.awaitBurst > 0 {
		fmt.Fprintf(&b, " %d events at once: %d connections send them together, %d a transaction, each transaction one statement calling `geneva.send_event` for each of its workflows; "+
			"steps/s is the %d steps over the time from the first event's `sent_at` to the last awaited step's `finished_at` (the database's clock), the sending included: the worker runs the first steps while the rest are sent, on the same cores.",
			o.awaitBurst, o.awaitConns, o.awaitPerTx, o.awaitBurst)
	}
	b.WriteString("\n\n")
	return b.String()
}

// rate formats the rate of the i-th sweep row's run.
func rate(p *profileResults, i int, run func(sweepRow) runStats) string {
	if i >= len(p.sweep) {
		return "—"
	}
	s := run(p.sweep[i])
	if s.units == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", s.rate())
}

func (l latency) String() string {
	return fmt.Sprintf("p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms (n=%d)", l.p50, l.p95, l.p99, l.max, l.n)
}

func mib(bytes int64) string { return fmt.Sprintf("%.0f MiB", float64(bytes)/(1<<20)) }

// listArg is a list flag's value as a shell word (” when empty).
func listArg(values []int) string {
	if len(values) == 0 {
		return "''"
	}
	return joinInts(values)
}

// runsText is -runs' value: a profile's name when the runs are its.
func runsText(runs []string) string {
	for _, name := range []string{"headline", "full"} {
		if slices.Equal(runs, runProfiles[name]) {
			return name
		}
	}
	if len(runs) == 0 {
		return "full" // results built without -runs (tests)
	}
	return strings.Join(runs, ",")
}

func joinInts(values []int) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// describeMachine says what the numbers were measured on.
func describeMachine(ctx context.Context, pool *pgxpool.Pool, throwaway bool) (string, error) {
	var version string
	if err := pool.QueryRow(ctx, "select version()").Scan(&version); err != nil {
		return "", err
	}
	settings := map[string]string{}
	rows, err := pool.Query(ctx, `select name, setting || coalesce(unit, '') from pg_settings
		where name in ('shared_buffers', 'max_wal_size', 'synchronous_commit', 'fsync', 'full_page_writes', 'max_connections')
		order by name`)
	if err != nil {
		return "", err
	}
	var parts []string
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return "", err
		}
		settings[name] = value
		parts = append(parts, name+"="+value)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	memory := "unknown"
	if meminfo, err := os.ReadFile("/proc/meminfo"); err == nil {
		line, _, _ := strings.Cut(string(meminfo), "\n")
		memory = strings.Join(strings.Fields(strings.TrimPrefix(line, "MemTotal:")), " ")
	}
	where := "a server given by URL, its settings"
	if throwaway {
		where = "a throwaway server started by the benchmark, on the same machine; its settings at the start (the runs switch fsync, synchronous_commit and full_page_writes as their columns say)"
	}
	load := "unknown"
	if loadavg, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(loadavg))[:3], " ")
	}
	return fmt.Sprintf("- Machine: %d cores (GOMAXPROCS %d), %s memory, %s/%s, %s; load average at the start %s\n- PostgreSQL: %s, %s: %s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), memory, runtime.GOOS, runtime.GOARCH, runtime.Version(), load,
		version, where, strings.Join(parts, ", ")), nil
}

// createdHow says how the runs create their workflows.
func createdHow(o options) string {
	if o.createOneByOne {
		return "one create_workflow call at a time, 100 a transaction"
	}
	return "geneva.create_workflows, 100 a call"
}

// growthMarkdown is the growth rows: a measure a row, a size a column, each
// figure after the first size's with its ratio to that one.
func (r *results) growthMarkdown(o options, settings string) string {
	if len(r.growth) == 0 {
		return ""
	}
	var b strings.Builder
	b2 := &b
	b.WriteString("## Cost as finished history grows\n\n")
	fmt.Fprintf(&b, "At each size, history holds that many finished workflows (ended over 29 days: 30 day partitions, created before the first size, "+
		"so that every size reads over the same partitions, as a database past its first month does; a fresh install has three; "+
		"BenchHistory of 3 steps, BenchHistoryPay of 5, BenchHistoryMail of 2, a parent of 3 children in 100; "+
		"1 in 10 with a step retried after an error, 1 in 20 canceled by an error, 1 in 100 by an operator; 1 in 5 with a consumed event; "+
		"some 3.3 executions a workflow), written beforehand with durability off: all but the last %d of a size straight into the history partitions "+
		"as housekeeping's move writes them, the last %d into the live tables and moved by housekeeping's rounds (timed, durable: the move row); "+
		"then `vacuum analyze` and a checkpoint. Then, %s: create_workflow (one per transaction, sequential, %d calls, each beside one on the empty database below), "+
		"claims and ends (%d workflows × %d no-op steps through a worker at %d slots, as the headline's; the best of %d runs; "+
		"PostgreSQL's CPU a step, the median; each run beside one on another database of the same server whose history is empty, the pair's order alternating, "+
		"so that the host's drifting load weighs on both: the ÷ rows), each view or read's query and each page of the web dashboard (package dashboard, served in process), "+
		"best of 3 (of 1 when one took over 10 s); `scrape` is promgeneva's query, each Prometheus scrape's. "+
		"A figure past the first size's is followed by its ratio to that one (issue 50's bars: claims and ends within 5%%, every read within 2×).\n\n",
		o.growthMoved, o.growthMoved, settings, o.growthCreates, o.growthWorkflows, o.steps, o.workers, o.growthRuns)
	b.WriteString("| finished workflows |")
	for _, g := range r.growth {
		fmt.Fprintf(&b, " %s |", thousands(int64(g.size)))
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(r.growth)) + "\n")
	base := r.growth[0]
	line := func(name string, value func(g growthRow) float64, format string) {
		fmt.Fprintf(&b, "| %s |", name)
		for i, g := range r.growth {
			v := value(g)
			if v <= 0 {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(&b, " "+format, v)
			if i > 0 && value(base) > 0 {
				fmt.Fprintf(&b, " (%.2f×)", v/value(base))
			}
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	line("claims and ends, steps/s", func(g growthRow) float64 { return g.steps }, "%.0f")
	line("the same, history empty, beside it", func(g growthRow) float64 { return g.refSteps }, "%.0f")
	ratio := func(name string, a, b func(g growthRow) float64) {
		fmt.Fprintf(b2, "| %s |", name)
		for _, g := range r.growth {
			if a(g) <= 0 || b(g) <= 0 {
				b2.WriteString(" — |")
				continue
			}
			fmt.Fprintf(b2, " %.2f× |", a(g)/b(g))
		}
		b2.WriteString("\n")
	}
	ratio("claims and ends ÷ beside it (bar: ≥ 0.95×)", func(g growthRow) float64 { return g.steps }, func(g growthRow) float64 { return g.refSteps })
	line("PostgreSQL CPU a step, µs", func(g growthRow) float64 { return g.cpuPerStep }, "%.0f")
	line("the same, history empty, beside it", func(g growthRow) float64 { return g.refCPUPerStep }, "%.0f")
	ratio("PostgreSQL CPU a step ÷ beside it (bar: ≤ 1.05×)", func(g growthRow) float64 { return g.cpuPerStep }, func(g growthRow) float64 { return g.refCPUPerStep })
	line("create_workflow p50, ms", func(g growthRow) float64 { return g.create.p50 }, "%.2f")
	line("the same, history empty, beside it", func(g growthRow) float64 { return g.refCreate.p50 }, "%.2f")
	line("create_workflow p99, ms", func(g growthRow) float64 { return g.create.p99 }, "%.2f")
	line("the same, history empty, beside it", func(g growthRow) float64 { return g.refCreate.p99 }, "%.2f")
	for i, v := range base.views {
		line(v.name+", ms", func(g growthRow) float64 {
			if i < len(g.views) {
				return float64(g.views[i].took) / float64(time.Millisecond)
			}
			return 0
		}, "%.1f")
	}
	line("the move (housekeeping's rounds), µs a workflow", func(g growthRow) float64 {
		if g.moved == 0 {
			return 0
		}
		return float64(g.moveTook) / float64(time.Microsecond) / float64(g.moved)
	}, "%.0f")
	b.WriteString("| written straight into history (setup) |")
	for _, g := range r.growth {
		if g.direct == 0 {
			b.WriteString(" — |")
			continue
		}
		fmt.Fprintf(&b, " %s in %s |", thousands(int64(g.direct)), g.directTook.Round(time.Second))
	}
	b.WriteString("\n| the database's size |")
	for _, g := range r.growth {
		fmt.Fprintf(&b, " %.1f GB |", float64(g.dbBytes)/1e9)
	}
	b.WriteString("\n\n")
	return b.String()
}

// thousands prints n with commas between its thousands.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
