package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestSummary(t *testing.T) {
	t.Parallel()

	run := func(units int, seconds float64) runStats {
		return runStats{units: units, elapsed: time.Duration(seconds * float64(time.Second))}
	}
	r := &results{
		profiles: []*profileResults{
			{name: "durable", durable: true, ceiling: run(10000, 1), sweep: []sweepRow{
				{slots: 8, geneva: run(1000, 1)},
				{slots: 32, geneva: run(2500, 1)},
				{slots: 128, geneva: run(2000, 1)},
			}},
			{name: "non-durable", ceiling: run(20000, 1), sweep: []sweepRow{
				{slots: 8, geneva: run(3000, 1)},
			}},
		},
		steady: latencyPair{jobLag: latency{p99: 12.34}},
	}

	// The last line's shape is a contract with scripts.
	want := "durable_steps/s=2500 nondurable_steps/s=3000 river_ceiling_jobs/s=10000 ratio=0.25 p99_lag_ms=12.3"
	if got := r.summary(); got != want {
		t.Errorf("summary() = %q, want %q", got, want)
	}

	// A durability not measured is "-".
	r.profiles = r.profiles[:1]
	if got := r.summary(); !strings.Contains(got, "nondurable_steps/s=- ") {
		t.Errorf("summary() without a non-durable run = %q", got)
	}
}

func TestRunStats(t *testing.T) {
	t.Parallel()

	s := runStats{units: 1000, elapsed: 2 * time.Second, commits: 250, walBytes: 2_000_000, workerCPU: 500 * time.Millisecond}
	if got := s.rate(); got != 500 {
		t.Errorf("rate() = %v, want 500", got)
	}
	if got := s.commitsPerUnit(); got != 0.25 {
		t.Errorf("commitsPerUnit() = %v, want 0.25", got)
	}
	if got := s.walPerUnit(); got != 2000 {
		t.Errorf("walPerUnit() = %v, want 2000", got)
	}
	if got := s.cpuPerUnit(s.workerCPU); got != 0.5 {
		t.Errorf("cpuPerUnit() = %v, want 0.5", got)
	}
	if got := (runStats{}).topWaits(); got != "—" {
		t.Errorf("topWaits() without samples = %q", got)
	}
	s.waits = []waitShare{{"LWLock:WALWrite", 0.72}, {"CPU (no wait event)", 0.2}}
	if got, want := s.topWaits(), "LWLock:WALWrite 72%, CPU (no wait event) 20%"; got != want {
		t.Errorf("topWaits() = %q, want %q", got, want)
	}
}

func TestProcStat(t *testing.T) {
	t.Parallel()

	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	f, ok := procStat(os.Getpid())
	if !ok {
		t.Fatal("procStat of this process failed")
	}
	if f.ppid != os.Getppid() {
		t.Errorf("ppid = %d, want %d", f.ppid, os.Getppid())
	}
	// This process is not PostgreSQL, so it has no postmaster.
	if pid := postmasterOf(os.Getpid()); pid != 0 {
		t.Errorf("postmasterOf(self) = %d, want 0", pid)
	}
}

func TestAwaitRows(t *testing.T) {
	t.Parallel()

	o := options{
		sweep: []int{32}, workers: 32, sampleEvery: 10 * time.Millisecond,
		awaitRate: 100, awaitFor: 10 * time.Second, awaitBurst: 10000, awaitConns: 4, awaitPerTx: 100,
	}
	awaited := func(p50, p99 float64, steps int, seconds float64) awaitResults {
		return awaitResults{
			offered: 100, achieved: 99.6,
			started:   latency{p50: p50, p95: p99 - 1, p99: p99, max: p99 + 5, n: 1000},
			send:      latency{p50: 2.5, p95: 4, p99: 6.25, max: 9, n: 1000},
			burst:     runStats{units: steps, elapsed: time.Duration(seconds * float64(time.Second)), commits: int64(steps) / 2},
			burstSend: 800 * time.Millisecond,
		}
	}
	r := &results{
		options: o,
		profiles: []*profileResults{
			{name: "durable", durable: true, set: true, sweep: []sweepRow{{slots: 32}}, await: awaited(6.7, 30.64, 10000, 4)},
			{name: "non-durable", set: true, sweep: []sweepRow{{slots: 32}}}, // its awaited runs failed to record
		},
	}
	text := r.markdown()
	for _, want := range []string{
		"| awaited step, 10000 events at once, 32 slots, steps/s | 2500 | — |\n",
		"| awaited step, event sent → step started, 100 events/s, p50 / p99 (ms) | 6.7 / 30.6 | — |\n",
		"| awaited step, 10000 events at once, 32 slots (the sends included) | 2500 | 0.50 |",
		"| awaited step, event sent (send_event's commit, as its sender sees it) → step started, 100 events/s offered (100 achieved), 32 slots, durable | p50 6.7 ms, p95 29.6 ms, p99 30.6 ms, max 35.6 ms (n=1000) |\n",
		"| send_event, one per transaction, at that load, durable | p50 2.5 ms, p95 4.0 ms, p99 6.2 ms, max 9.0 ms (n=1000) |\n",
		"| 10000 events at once, 4 connections, 100 a transaction, durable: sending them | 0.80 s (12500 events/s) |\n",
		"1000 workflows' events sent at 100 a second, one per transaction",
		"10000 events at once: 4 connections send them together, 100 a transaction",
		"-await-rate 100 -await-for 10s -await-burst 10000 -await-conns 4 -await-per-tx 100 ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown() lacks %q", want)
		}
	}
	if strings.Contains(text, "awaited step, event sent (send_event's commit, as its sender sees it) → step started, 100 events/s offered (100 achieved), 32 slots, non-durable") {
		t.Error("markdown() has a latency row for a durability whose awaited runs recorded nothing")
	}

	// Skipped runs leave no rows and no prose.
	r.options.awaitFor, r.options.awaitBurst = 0, 0
	r.profiles = r.profiles[1:]
	if text := r.markdown(); strings.Contains(text, "awaited step") || strings.Contains(text, "awaits an event") {
		t.Errorf("markdown() without awaited runs mentions them:\n%s", text)
	}
}

func TestLimitRows(t *testing.T) {
	t.Parallel()

	o := options{
		sweep: []int{32}, workers: 32, steps: 5, sampleEvery: 10 * time.Millisecond,
		limitWorkflows: 3000, limitGroups: 8, limitPairs: 2, fairBig: 5000, fairGroups: 10, fairSmall: 10,
	}
	run := func(steps int, seconds, serverCPU float64) runStats {
		return runStats{
			units: steps, elapsed: time.Duration(seconds * float64(time.Second)),
			serverCPU: time.Duration(serverCPU * float64(time.Second)),
		}
	}
	r := &results{
		options: o,
		profiles: []*profileResults{
			{name: "durable", durable: true, set: true, sweep: []sweepRow{{slots: 32}}, limits: limitResults{
				unlimited:        run(15000, 10, 15),
				never:            run(15000, 12.5, 15),
				unlimitedOwnJobs: run(15000, 15, 15),
				saturated:        run(15000, 30, 19.5),
				saturatedBase:    run(15000, 20, 18),
				saturatedJobs:    1.994, ownJobsJobs: 1,
				neverRatios: []float64{0.75, 0.85}, saturatedExtras: []float64{0.15, 0.05},
				fair: fairResult{big: 5000, groups: 10, small: 10, smallCreated: 1250 * time.Millisecond, smallDone: 4560 * time.Millisecond, bigByThen: 37},
			}},
			{name: "non-durable", set: true, sweep: []sweepRow{{slots: 32}}}, // its limit runs failed to record
		},
	}
	text := r.markdown()
	for _, want := range []string{
		"| without limits, 32 slots, steps/s (run beside the limit runs) | 1500 | — |\n",
		"| limit defined, never reached (concurrency 100000 by type), 32 slots, steps/s (÷ without limits; ÷ each step its own job) | **1200** (0.80×; 1.20×; by pair 0.75×, 0.85×) | — |\n",
		"| each step its own job, without limits, 32 slots, steps/s (run beside the limit runs) | 1000 | — |\n",
		"| limit saturated (concurrency 2 by group, 8 groups), 32 slots, steps/s | 500 | — |\n",
		"| limit saturated: PostgreSQL CPU ms/step (more than each step its own job without limits, at 16 slots; at 32) | 1.300 (**+0.100**, by pair +0.150, +0.050; +0.300) | — |\n",
		"| limit saturated: River jobs per step (each step its own job without limits) | 1.99 (1.00) | — |\n",
		"| fairness (concurrency 2 by group): 10 groups of 10, created after a group of 5000, all finished (s from the start) | 4.6 s (created at 1.2 s) | — |\n",
		"| fairness: the group of 5000's workflows finished by then (bar: fewer than 1000) | **37** | — |\n",
		"| limit never reached (concurrency 100000 by type), 32 slots | 1200 |",
		"| limit saturated (concurrency 2 by group, 8 groups), 32 slots | 500 |",
		"each run creates 3000 workflows of 5 no-op steps at once with a worker of 32 slots",
		"spread over 8 groups (at most 16 steps in progress of 32 slots;",
		"5000 workflows of one group are created (a hundred a call), then 10 groups of 10;",
		"-limit-workflows 3000 -limit-groups 8 -limit-pairs 2 -fair-big 5000 -fair-groups 10 -fair-small 10 ",
		"Each comparison ran 2 pairs: its row pools them",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown() lacks %q", want)
		}
	}
	if strings.Contains(text, "| limit never reached (concurrency 100000 by type), 32 slots | 0 |") {
		t.Error("markdown() has a cost row for a limit run that recorded nothing")
	}

	// PostgreSQL's CPU unseen: no difference.
	l := r.profiles[0].limits
	l.saturatedExtras = nil
	if got, want := l.cpuText(), "1.300 (**+0.100**; +0.300)"; got != want {
		t.Errorf("cpuText() of one pair = %q, want %q", got, want)
	}
	l.unlimitedOwnJobs.serverCPU = 0
	if got, want := l.cpuText(), "1.300"; got != want {
		t.Errorf("cpuText() without the own-job run's CPU = %q, want %q", got, want)
	}
	l.saturated.serverCPU = 0
	if got, want := l.cpuText(), "n/a"; got != want {
		t.Errorf("cpuText() without CPU = %q, want %q", got, want)
	}

	// Skipped runs leave no rows and no prose.
	r.options.limitWorkflows, r.options.fairBig = 0, 0
	r.profiles[0].limits = limitResults{}
	if text := r.markdown(); strings.Contains(text, "| limit") || strings.Contains(text, "without limits") || strings.Contains(text, "airness") {
		t.Errorf("markdown() without limit runs mentions them:\n%s", text)
	}
}

func TestFanoutRows(t *testing.T) {
	t.Parallel()

	o := options{sweep: []int{32}, workers: 32, steps: 5, sampleEvery: 10 * time.Millisecond, fanoutChildren: 10000, fanoutParents: 100, fanoutRounds: 2}
	run := func(steps int, seconds float64) runStats {
		return runStats{units: steps, elapsed: time.Duration(seconds * float64(time.Second)), commits: int64(steps)}
	}
	f := fanoutResults{
		rounds: []fanoutRound{
			{
				ownJobs: run(10000, 10), roots: run(10000, 12.5), one: run(10000, 11),
				ownJobsCreated: 2 * time.Second, rootsCreated: 2500 * time.Millisecond, oneFirstStep: 1400 * time.Millisecond,
				oneJoin: latency{p50: 21.74, p99: 21.74, max: 21.74, n: 1},
			},
			{
				ownJobs: run(10000, 5), roots: run(10000, 7.5), one: run(10000, 9),
				ownJobsCreated: 1 * time.Second, rootsCreated: 1500 * time.Millisecond, oneFirstStep: 600 * time.Millisecond,
				oneJoin: latency{p50: 15.02, p99: 15.02, max: 15.02, n: 1},
			},
		},
		endsOnly: run(10000, 8), rootsEndsOnly: run(10000, 5),
		manyJoin: latency{p50: 12.34, p95: 30, p99: 41.06, max: 47, n: 100},
	}
	f.pool()
	r := &results{
		options: o,
		profiles: []*profileResults{
			{name: "durable", durable: true, set: true, sweep: []sweepRow{{slots: 32}}, fanout: f},
			{name: "non-durable", set: true, sweep: []sweepRow{{slots: 32}}}, // its fan-out runs failed to record
		},
	}
	// Pooled: 20,000 steps over 20 s (one parent), 15 s (each step its own
	// job), 20 s (without a parent); by round 909 ÷ 1000 and 1111 ÷ 2000.
	text := r.markdown()
	for _, want := range []string{
		"| fan-out: one parent, 10000 children of one no-op step, 32 slots, children's steps/s, 2 rounds pooled (÷ each step its own job, bar ≥ 0.9×, pooled and by round; ÷ the same workflows without a parent) | **1000** (**0.75×** pooled; rounds 0.91× / 0.56×; ÷ without a parent 1.00×; their first step 1.0 s after their creation began) | — |\n",
		"| each step its own job, 32 slots, steps/s (2000 workflows × 5 steps, run beside the fan-out runs, 2 rounds pooled) | 1333 (created in 1.5 s; rounds 1000 / 2000) | — |\n",
		"| the same 10000 one-step workflows without a parent, 32 slots, steps/s, 2 rounds pooled | 1000 (created in 2.0 s; rounds 800 / 1333) | — |\n",
		"| fan-out: the last child's end → the join step's start, p50 / p99 (ms) (bar: p99 ≤ 50; 100 parents of 100, one after another; the one parent of 10000, each round) | **12.3 / 41.1** (n=100); 21.7, 15.0 | — |\n",
		"| fan-out: one parent's 10000 children, 32 slots, 2 rounds pooled | 1000 | 1.00 |",
		"| fan-out: the same 10000 children created beforehand, their ends alone, steps/s (÷ the same workflows without a parent, created beforehand) | 1250 (0.62×; 2000) | — |\n",
		"One parent: a workflow whose first step starts 10000 children of one no-op step",
		"none runs before it commits",
		"The three ran in 2 rounds",
		"100 parents, one after another with one worker",
		"-fanout-children 10000 -fanout-parents 100 -fanout-rounds 2 ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown() lacks %q", want)
		}
	}

	// Only the one parent's join.
	f.manyJoin = latency{}
	if got, want := f.joinText(), "21.7, 15.0"; got != want {
		t.Errorf("joinText() of the one parent = %q, want %q", got, want)
	}

	// One round: the ratio alone, no rounds.
	r.options.fanoutRounds = 1
	one := fanoutResults{rounds: f.rounds[:1]}
	one.pool()
	r.profiles[0].fanout = one
	text = r.markdown()
	for _, want := range []string{
		"| fan-out: one parent, 10000 children of one no-op step, 32 slots, children's steps/s (÷ each step its own job, bar ≥ 0.9×; ÷ the same workflows without a parent) | **909** (**0.91×**; ÷ without a parent 1.14×; their first step 1.4 s after their creation began) | — |\n",
		"| each step its own job, 32 slots, steps/s (2000 workflows × 5 steps, run beside the fan-out runs) | 1000 (created in 2.0 s) | — |\n",
		"The three ran once",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown() of one round lacks %q", want)
		}
	}

	// A skipped run leaves no rows and no prose.
	r.options.fanoutChildren = 0
	r.profiles[0].fanout = fanoutResults{}
	if text := r.markdown(); strings.Contains(text, "fan-out") || strings.Contains(text, "without a parent") {
		t.Errorf("markdown() without the fan-out runs mentions them:\n%s", text)
	}
}

func TestKeyedRows(t *testing.T) {
	t.Parallel()

	o := options{workers: 32, sampleEvery: 10 * time.Millisecond, awaitConns: 4, awaitPerTx: 100, keyedWorkflows: 1000, keyedSends: 10000}
	r := &results{
		options: o,
		profiles: []*profileResults{
			{name: "durable", durable: true, set: true, keyed: keyedResults{
				workflows: 1000,
				unkeyed:   []float64{2000, 2500, 2000}, keyed: []float64{1900, 2000, 2100},
				unkeyedEvents: 30000, keyedEvents: 30000,
				unkeyedTook: 12 * time.Second, keyedTook: 15 * time.Second,
			}},
			{name: "non-durable", set: true}, // its run failed to record
		},
	}
	if got, want := r.profiles[0].keyed.cost(), 0.25; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("cost() = %v, want %v (15 s over 12 s, less one)", got, want)
	}
	text := r.markdown()
	for _, want := range []string{
		"| send_event without a key / with one, events/s (10000 events to 1000 workflows, 3 rounds each; bar: a key costs ≤ 10%) | 2500 / 2000 (**a key costs +25.0% a send**; rounds: 2000 / 1900, 2500 / 2000, 2000 / 2100) | — |\n",
		"The send_event row measures what an event key",
		"-keyed-workflows 1000 -keyed-sends 10000 -cells-seconds 0 -cells-workflows 0`",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown() lacks %q:\n%s", want, text)
		}
	}

	// A skipped run leaves no rows and no prose.
	r.options.keyedWorkflows = 0
	if text := r.markdown(); strings.Contains(text, "send_event without a key") || strings.Contains(text, "event key") {
		t.Errorf("markdown() without the keyed-send run mentions it:\n%s", text)
	}
}

func TestMergeRuns(t *testing.T) {
	t.Parallel()

	a := runStats{units: 100, elapsed: time.Second, serverCPU: 100 * time.Millisecond, walBytes: 1000, seen: 10,
		waits: []waitShare{{"CPU (no wait event)", 0.5}, {"IO:WALSync", 0.5}}}
	b := runStats{units: 300, elapsed: time.Second, serverCPU: 500 * time.Millisecond, walBytes: 3000, seen: 30,
		waits: []waitShare{{"CPU (no wait event)", 1}}}
	m := mergeRuns(a, b)
	if m.rate() != 200 {
		t.Errorf("pooled rate = %v, want 200 (all steps over all time)", m.rate())
	}
	if got := m.cpuPerUnit(m.serverCPU); got != 1.5 {
		t.Errorf("pooled CPU per step = %v ms, want 1.5 (weighted by steps)", got)
	}
	if m.walPerUnit() != 10 {
		t.Errorf("pooled WAL per step = %v, want 10", m.walPerUnit())
	}
	if len(m.waits) != 2 || m.waits[0].event != "CPU (no wait event)" || m.waits[0].share != 35.0/40 || m.waits[1].share != 5.0/40 {
		t.Errorf("pooled waits = %v, want CPU 35/40, IO:WALSync 5/40", m.waits)
	}
	b.serverCPU = 0
	if m := mergeRuns(a, b); m.serverCPU != 0 {
		t.Errorf("pooled CPU with a run that did not see it = %v, want 0 (unseen)", m.serverCPU)
	}
}

// TestCellsRows: the cells run's output (bench/cells/run.sh) becomes the
// report's Cells section; without PL/Proxy the section says so.
func TestCellsRows(t *testing.T) {
	t.Parallel()
	out := `what                  calls/s    p50 µs    p99 µs
create (one)             1000       900      2000
get (one)                5000       150       400
create (a cell)           990       910      2100
get (a cell)             4900       155       410
create (router)           400      2400      6000
get (router)             3000       260       700

1000 workflows of 5 no-op steps a side, steps a second:
  one database, 1 worker                   1200
  one database, 2 workers                  1300
  2 cells via the router, a worker each    1000
cells ÷ one database: 0.83 (same workers: 0.77)
`
	r := &results{options: options{cellsSeconds: 3, cellsWorkflows: 1000}}
	if err := r.cells.parse(out); err != nil {
		t.Fatal(err)
	}
	text := r.cells.markdown(r.options, "durable")
	for _, want := range []string{
		"## Cells\n",
		"| steps/s: 2 cells ÷ one database (1 worker; 2 workers) | **0.83** (0.77) |\n",
		"| create_workflow (by hero) through the router, added p50 / p99 | **1500 / 4000 µs** (router 2400 / 6000 µs, one database 900 / 2000 µs) |\n",
		"| get_workflow (by id) through the router, added p50 / p99 | **110 / 300 µs**",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown lacks %q:\n%s", want, text)
		}
	}
	if err := (&cellsResults{}).parse("nothing"); err == nil {
		t.Error("parse took an output without figures")
	}
	r.cells = cellsResults{missing: "PL/Proxy missing (postgresql-15-plproxy)"}
	if text := r.cells.markdown(r.options, "durable"); !strings.Contains(text, "Not measured: PL/Proxy missing") {
		t.Errorf("markdown without PL/Proxy = %q", text)
	}
	if text := r.cells.markdown(options{}, "durable"); text != "" {
		t.Errorf("markdown of a skipped run = %q", text)
	}
}
