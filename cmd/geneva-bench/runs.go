package main

import (
	"fmt"
	"slices"
	"strings"
)

// A benchRun is a part of the benchmark that -runs selects by name; the
// knobs (-sweep, -limit-workflows, …) size the runs selected. A run not
// selected is turned off through its knob, as a zero knob always did, so
// the report's "Run with" line, which prints the knobs, says what ran.
type benchRun struct {
	name string
	what string
	off  func(o *options)
}

var benchRuns = []benchRun{
	{"sweep", "Geneva at each of -sweep's slots, with the full-load latencies and the worker's peak memory at -workers",
		func(o *options) { o.sweep = nil }},
	{"own-jobs", "the same with every step through its own River job (in the sweep and in the ceiling runs)",
		func(o *options) { o.ownJobs = false }},
	{"river", "raw River with the same slots and settings, at each of -sweep's slots",
		func(o *options) { o.riverSlots = false }},
	{"ceiling", "River's ceiling, measured as River's own benchmark does, and Geneva measured the same way",
		func(o *options) { o.ceilingJobs, o.genevaCeiling = 0, false }},
	{"unbatched", "Geneva with every step's end recorded alone (batching's before), at each of -sweep's slots",
		func(o *options) { o.unbatched = false }},
	{"unbatched-own-jobs", "the same with every step through its own River job",
		func(o *options) { o.unbatchedOwnJobs = false }},
	{"http", "HTTP steps to a local endpoint beside as many no-op Go steps",
		func(o *options) { o.httpWorkflows = 0 }},
	{"steady", "start latency at a steady offered load",
		func(o *options) { o.steadyFor = 0 }},
	{"create", "create_workflow and create_workflows throughput",
		func(o *options) { o.creates = 0 }},
	{"await", "a step that awaits an event: at a steady rate of events, and 10,000 sent at once",
		func(o *options) { o.awaitFor, o.awaitBurst = 0, 0 }},
	{"limits", "a concurrency limit never reached and a saturated one, each beside runs without limits",
		func(o *options) { o.limitWorkflows = 0 }},
	{"fanout", "one parent fanning out -fanout-children children of one no-op step and joining them, beside each step its own job, in -fanout-rounds rounds; the join's latency over -fanout-parents parents",
		func(o *options) { o.fanoutChildren = 0 }},
	{"keys", "send_event with an event key beside without one (issue 49's bar: a key costs at most 10%)",
		func(o *options) { o.keyedWorkflows, o.keyedSends = 0, 0 }},
	{"fairness", "a big group's backlog beside small groups under a limit by group",
		func(o *options) { o.fairBig = 0 }},
	{"growth", "claims and ends, create_workflow, the views, reads and metrics query and the dashboard's pages as finished history grows (-growth's sizes; make bench-growth: to 10,000,000)",
		func(o *options) { o.growth = nil }},
	{"schedules", "fire_schedules beside 0, 1,000 and -schedules schedules",
		func(o *options) { o.schedules = 0 }},
	{"resumable", "a resumable step's iterations and round trips",
		func(o *options) { o.resumableIterations = 0 }},
	{"cells", "a PL/Proxy router onto 2 cells: steps/s ÷ one database, and the router's added latency a call (bench/cells/run.sh, shorter; needs PL/Proxy and pgbench)",
		func(o *options) { o.cellsSeconds = 0 }},
}

// runProfiles name sets of runs. headline, the default (`make bench`), is
// what docs/performance.md (and the README's sentence of it) and
// bench/NOTES.md's throughput bars quote, with issue 49's bar on event keys
// (keys: some 15 s a durability), and fits in about a quarter of an hour on
// a 2-core machine; full (`make bench/full`) is every run.
var runProfiles = map[string][]string{
	"headline": {"sweep", "own-jobs", "river", "ceiling", "unbatched", "http", "steady", "create", "keys", "cells"},
	"full":     runNames(),
}

func runNames() []string {
	names := make([]string, len(benchRuns))
	for i, r := range benchRuns {
		names[i] = r.name
	}
	return names
}

// selectRuns turns off every run that list (-runs: names of runs and
// profiles, comma-separated) does not select, and returns the runs it
// selects, in benchRuns' order.
func selectRuns(o *options, list string) ([]string, error) {
	selected := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if profile, ok := runProfiles[name]; ok {
			for _, n := range profile {
				selected[n] = true
			}
			continue
		}
		if !slices.Contains(runNames(), name) {
			return nil, fmt.Errorf("-runs: unknown run %q (runs: %s; profiles: headline, full)", name, strings.Join(runNames(), ", "))
		}
		selected[name] = true
	}
	if len(selected) == 0 {
		return nil, fmt.Errorf("-runs selects no run")
	}
	var names []string
	for _, r := range benchRuns {
		if selected[r.name] {
			names = append(names, r.name)
		} else {
			r.off(o)
		}
	}
	return names, nil
}

// runsUsage is -runs' help: the profiles, then each run.
func runsUsage() string {
	var b strings.Builder
	b.WriteString("the runs to make, comma-separated: a profile, headline (the default: ")
	b.WriteString(strings.Join(runProfiles["headline"], ", "))
	b.WriteString(") or full (every run), and/or runs by name:")
	for _, r := range benchRuns {
		fmt.Fprintf(&b, "\n  %s: %s", r.name, r.what)
	}
	return b.String()
}
