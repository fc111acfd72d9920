package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

type results struct {
	machine string
	options options

	genevaSteps   int
	genevaElapsed time.Duration
	genevaRSS     int64
	genevaCPU     cpuSplit
	fullLoad      latencyPair

	riverJobs    int
	riverElapsed time.Duration
	riverRSS     int64

	steadyOffered  int
	steadyAchieved float64
	steady         latencyPair

	createsOnePerTx     float64
	createsHundredPerTx float64

	sweep []sweepRow

	growth []growthRow

	resumable resumableResult
}

// sweepRow is the throughput of Geneva (inline steps, and every step through
// its own River job) and of raw River at one number of slots.
type sweepRow struct {
	workers                      int
	geneva, genevaOwnJobs, river float64
}

// best is the sweep's best Geneva and River rates (zero without a sweep).
func (r *results) best() (geneva, river sweepRow) {
	for _, row := range r.sweep {
		if row.geneva > geneva.geneva {
			geneva = row
		}
		if row.river > river.river {
			river = row
		}
	}
	return geneva, river
}

// cpuSplit is where the CPU went during a run.
type cpuSplit struct {
	total, worker, bench time.Duration
}

type growthRow struct {
	size   int
	create latency
	views  []viewTime
}

type viewTime struct {
	name string
	took time.Duration
}

func (r *results) stepsPerSecond() float64 {
	return float64(r.genevaSteps) / r.genevaElapsed.Seconds()
}

func (r *results) riverPerSecond() float64 {
	return float64(r.riverJobs) / r.riverElapsed.Seconds()
}

// summary is the last line, for scripts: Geneva's steps/s and its ratio to
// River's jobs/s, each at its best number of slots when there was a sweep
// (else the main run's), and the p99 start lag at the steady load of the
// steps started by their own River job (inline steps start with no lag, and
// counting them would hide the lag of the rest).
func (r *results) summary() string {
	geneva, river := r.stepsPerSecond(), r.riverPerSecond()
	if bestGeneva, bestRiver := r.best(); bestGeneva.geneva > 0 {
		geneva, river = bestGeneva.geneva, bestRiver.river
	}
	return fmt.Sprintf("steps/s=%.0f ratio_vs_river=%.2f p99_lag_ms=%.1f", geneva, geneva/river, r.steady.jobLag.p99)
}

func (r *results) markdown() string {
	var b strings.Builder
	o := r.options
	fmt.Fprintf(&b, "# Geneva benchmark\n\n%s\n", r.machine)
	fmt.Fprintf(&b, "Run with `go run ./cmd/geneva-bench -workflows %d -steps %d -workers %d -pool %d -inline-steps %d -sweep %s -fetch-cooldown %s -steady-rate %d -steady-for %s -creates %d -create-conns %d -growth %s` on %s.\n\n",
		o.workflows, o.steps, o.workers, o.pool, o.inlineSteps, joinInts(o.sweep), o.fetchCooldown, o.steadyRate, o.steadyFor, o.creates, o.createConns,
		joinInts(o.growth), time.Now().UTC().Format("2006-01-02"))

	b.WriteString("## Throughput and latency\n\n| measure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| Geneva: %d workflows × %d no-op steps, %d slots | **%.0f steps/s** (%d steps in %s) |\n",
		o.workflows, o.steps, o.workers, r.stepsPerSecond(), r.genevaSteps, r.genevaElapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "| raw River: %d no-op jobs, same slots and settings | %.0f jobs/s (in %s) |\n",
		r.riverJobs, r.riverPerSecond(), r.riverElapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "| Geneva steps/s ÷ River jobs/s | **%.2f** |\n", r.stepsPerSecond()/r.riverPerSecond())
	if c := r.genevaCPU; c.total > 0 {
		perStep := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(r.genevaSteps) }
		fmt.Fprintf(&b, "| CPU per Geneva step: machine / worker process / benchmark / the rest (PostgreSQL, kernel) | %.2f / %.2f / %.2f / %.2f ms (machine %.0f%% busy) |\n",
			perStep(c.total), perStep(c.worker), perStep(c.bench), perStep(c.total-c.worker-c.bench),
			100*c.total.Seconds()/(r.genevaElapsed.Seconds()*float64(runtime.NumCPU())))
	}
	fmt.Fprintf(&b, "| start lag (scheduled → started), full load | %s |\n", r.fullLoad.lag)
	fmt.Fprintf(&b, "| start lag of the steps started by their own River job, full load | %s |\n", r.fullLoad.jobLag)
	fmt.Fprintf(&b, "| step gap (one step ends → next starts), full load | %s |\n", r.fullLoad.gap)
	fmt.Fprintf(&b, "| steady load: offered %d steps/s, achieved | %.0f steps/s |\n", r.steadyOffered, r.steadyAchieved)
	fmt.Fprintf(&b, "| start lag, steady load | %s |\n", r.steady.lag)
	fmt.Fprintf(&b, "| start lag of the steps started by their own River job, steady load | %s |\n", r.steady.jobLag)
	fmt.Fprintf(&b, "| step gap, steady load | %s |\n", r.steady.gap)
	fmt.Fprintf(&b, "| create_workflow, one per transaction, %d connections | %.0f /s |\n", o.createConns, r.createsOnePerTx)
	fmt.Fprintf(&b, "| create_workflow, 100 per transaction, %d connections | %.0f /s |\n", o.createConns, r.createsHundredPerTx)
	fmt.Fprintf(&b, "| worker peak RSS: Geneva / raw River | %s / %s |\n\n", mib(r.genevaRSS), mib(r.riverRSS))

	if len(r.sweep) > 0 {
		b.WriteString("## Throughput by slots\n\n")
		fmt.Fprintf(&b, "The same %d workflows × %d no-op steps (and as many River jobs) at each number of slots, with slots + 6 connections. "+
			"Geneva's worker runs a workflow's next step in the same job when it is due at once (Config.InlineSteps); "+
			"the middle column turns that off, so every step goes through its own River job.\n\n", o.workflows, o.steps)
		b.WriteString("| slots | Geneva steps/s | Geneva, each step its own job | raw River jobs/s | Geneva ÷ River |\n|---|---|---|---|---|\n")
		for _, row := range r.sweep {
			fmt.Fprintf(&b, "| %d | %.0f | %.0f | %.0f | %.2f |\n", row.workers, row.geneva, row.genevaOwnJobs, row.river, row.geneva/row.river)
		}
		bestGeneva, bestRiver := r.best()
		fmt.Fprintf(&b, "\nEach at its best: Geneva %.0f steps/s (%d slots), River %.0f jobs/s (%d slots): **%.2f**.\n\n",
			bestGeneva.geneva, bestGeneva.workers, bestRiver.river, bestRiver.workers, bestGeneva.geneva/bestRiver.river)
	}

	if len(r.growth) > 0 {
		b.WriteString("## Cost as finished history grows\n\n")
		b.WriteString("create_workflow latency (one per transaction, sequential), each dashboard view's query time (engine_metrics is a Prometheus scrape's one query), and each page of the web dashboard (package dashboard, served in process) (best of 3).\n\n")
		b.WriteString("| finished workflows | create p50 | create p95 |")
		for _, v := range r.growth[0].views {
			fmt.Fprintf(&b, " %s |", v.name)
		}
		b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(r.growth[0].views)) + "\n")
		for _, g := range r.growth {
			fmt.Fprintf(&b, "| %d | %.2f ms | %.2f ms |", g.size, g.create.p50, g.create.p95)
			for _, v := range g.views {
				fmt.Fprintf(&b, " %.1f ms |", float64(v.took)/float64(time.Millisecond))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	b.WriteString(r.resumable.markdown())
	fmt.Fprintf(&b, "```\n%s\n```\n", r.summary())
	return b.String()
}

func (l latency) String() string {
	return fmt.Sprintf("p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms (n=%d)", l.p50, l.p95, l.p99, l.max, l.n)
}

func mib(bytes int64) string { return fmt.Sprintf("%.0f MiB", float64(bytes)/(1<<20)) }

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
	where := "a server given by URL"
	if throwaway {
		where = "a throwaway server started by the benchmark, on the same machine"
	}
	return fmt.Sprintf("- Machine: %d cores (GOMAXPROCS %d), %s memory, %s/%s, %s\n- PostgreSQL: %s, %s; %s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), memory, runtime.GOOS, runtime.GOARCH, runtime.Version(),
		version, where, strings.Join(parts, ", ")), nil
}
