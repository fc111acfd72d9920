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
