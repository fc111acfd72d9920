package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// defaults are the flags' defaults that -runs turns off.
func defaults() options {
	return options{
		sweep: []int{8, 32, 128}, workers: 32, steps: 5, ownJobs: true, riverSlots: true, unbatched: true, unbatchedOwnJobs: true,
		ceilingJobs: 50000, genevaCeiling: true, httpWorkflows: 1000, steadyFor: 10 * time.Second, steadyRate: 500,
		creates: 5000, createConns: 4, awaitRate: 100, awaitFor: 10 * time.Second, awaitBurst: 10000,
		limitWorkflows: 1000, limitGroups: 8, fairBig: 5000, fairGroups: 10, fairSmall: 10,
		fanoutChildren: 10000, fanoutParents: 100, keyedWorkflows: 1000, keyedSends: 10000,
		cellsSeconds: 3, cellsWorkflows: 500,
		growth: []int{0, 100000, 1000000}, schedules: 10000, resumableIterations: 2000000,
		sampleEvery: 10 * time.Millisecond,
	}
}

func TestSelectRuns(t *testing.T) {
	t.Parallel()

	// headline, the default: the rows docs/performance.md and the
	// throughput bars quote; the rest off
	o := defaults()
	runs, err := selectRuns(&o, "headline")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sweep", "own-jobs", "river", "ceiling", "unbatched", "http", "steady", "create", "keys", "cells"}; !slices.Equal(runs, want) {
		t.Errorf("headline = %v, want %v", runs, want)
	}
	on := o.sweep != nil && o.ownJobs && o.riverSlots && o.ceilingJobs > 0 && o.genevaCeiling && o.unbatched &&
		o.httpWorkflows > 0 && o.steadyFor > 0 && o.creates > 0 && o.keyedWorkflows > 0 && o.keyedSends > 0 && o.cellsSeconds > 0
	off := !o.unbatchedOwnJobs && o.awaitFor == 0 && o.awaitBurst == 0 && o.limitWorkflows == 0 && o.fairBig == 0 && o.fanoutChildren == 0 &&
		o.growth == nil && o.schedules == 0 && o.resumableIterations == 0
	if !on || !off {
		t.Errorf("headline left the options %+v", o)
	}

	// full: every run, as the flags say
	o = defaults()
	if runs, err = selectRuns(&o, "full"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(runs, runNames()) {
		t.Errorf("full = %v", runs)
	}
	if want := defaults(); !slices.Equal(o.growth, want.growth) || o.limitWorkflows != want.limitWorkflows || !o.unbatchedOwnJobs {
		t.Errorf("full changed the options: %+v", o)
	}

	// a profile and runs by name, in any order and spacing
	o = defaults()
	if runs, err = selectRuns(&o, " limits, headline,fairness"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(runs, "limits") || !slices.Contains(runs, "fairness") || !slices.Contains(runs, "sweep") || slices.Contains(runs, "growth") {
		t.Errorf("headline,limits,fairness = %v", runs)
	}
	if o.limitWorkflows != 1000 || o.fairBig != 5000 || o.growth != nil {
		t.Errorf("headline,limits,fairness left the options %+v", o)
	}

	// the fan-out run alone
	o = defaults()
	if runs, err = selectRuns(&o, "fanout"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(runs, []string{"fanout"}) || o.fanoutChildren != 10000 || o.sweep != nil || o.limitWorkflows != 0 || o.creates != 0 {
		t.Errorf("fanout = %v, options %+v", runs, o)
	}

	for _, bad := range []string{"headlines", "", " , ", "growth,nope"} {
		o = defaults()
		if _, err := selectRuns(&o, bad); err == nil {
			t.Errorf("selectRuns(%q) took it", bad)
		}
	}
}

// TestSkippedRunsReport: the report of a run without the sweep, the steady
// load and create_workflow's runs has no rows for them, and says how to run
// it again.
func TestSkippedRunsReport(t *testing.T) {
	t.Parallel()

	o := defaults()
	runs, err := selectRuns(&o, "growth")
	if err != nil {
		t.Fatal(err)
	}
	o.runs = runs
	r := &results{
		options:  o,
		profiles: []*profileResults{{name: "durable", durable: true, set: true}},
		growth:   []growthRow{{size: 0, views: []viewTime{{name: "workflow_counts", took: time.Millisecond}}}},
	}
	text := r.markdown()
	for _, want := range []string{"-runs growth ", "-sweep '' ", "-growth 0,100000,1000000 ", "## Cost as finished history grows"} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown() lacks %q", want)
		}
	}
	for _, unwanted := range []string{"Geneva at its best", "## Latency and the rest", "## Cost per step", "steady load", "create_workflow, one per transaction", "peak RSS", "unbatched (before), steps/s"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("markdown() has %q:\n%s", unwanted, text)
		}
	}

	// headline: the unbatched runs without their own jobs
	o = defaults()
	if o.runs, err = selectRuns(&o, "headline"); err != nil {
		t.Fatal(err)
	}
	r = &results{options: o, profiles: []*profileResults{{name: "durable", durable: true, set: true}}}
	text = r.markdown()
	if !strings.Contains(text, "-runs headline ") || !strings.Contains(text, "| Geneva, 32 slots, unbatched (before), steps/s |") ||
		strings.Contains(text, "each step its own job, unbatched (before), steps/s") || !strings.Contains(text, "-growth '' ") {
		t.Errorf("markdown() of the headline runs:\n%s", text)
	}
}
