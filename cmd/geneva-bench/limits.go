package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/worker"
)

// The limit runs measure what a concurrency limit costs (WorkflowOpts.
// Concurrency, decided in SQL when a step is claimed), at each durability
// after its throughput runs, with -workers slots:
//   - a limit defined but never reached: BenchLimited, the headline's no-op
//     steps with a concurrency by type far above the slots, beside the same
//     workflows without limits run just before it; a step held to a limit is
//     never run inline, so it is also compared with "each step its own job";
//   - a saturated limit: BenchGrouped, 2 in progress per group, the workflows
//     spread over -limit-groups groups, beside every step its own job
//     without limits run just before it (the PostgreSQL CPU per step, and the
//     River jobs per step);
//   - fairness: BenchFair (one no-op step, 2 in progress per group), a big
//     group of -fair-big workflows created, then -fair-groups small groups of
//     -fair-small each: when every small group had finished, and how many of
//     the big group's had by then.

const (
	// neverReached is BenchLimited's concurrency by type: far above any slots.
	neverReached = 100000
	// groupLimit is BenchGrouped's and BenchFair's concurrency by group.
	groupLimit = 2
	// fairBar is the big group's workflow before which every small group's
	// must have finished (the bar: its 1,000th).
	fairBar = 1000
)

// limitWorkflows are the limit runs' workflow types.
func limitWorkflows(steps int) []*worker.Workflow {
	return []*worker.Workflow{
		noopWorkflow("BenchLimited", steps, &worker.WorkflowOpts{
			Concurrency: &worker.Concurrency{By: worker.ByType, Limit: neverReached},
		}),
		noopWorkflow("BenchGrouped", steps, &worker.WorkflowOpts{
			Concurrency: &worker.Concurrency{By: worker.ByGroup, Limit: groupLimit},
		}),
		noopWorkflow("BenchFair", 1, &worker.WorkflowOpts{
			Concurrency: &worker.Concurrency{By: worker.ByGroup, Limit: groupLimit},
		}),
	}
}

// limitResults are the limit runs at one durability.
type limitResults struct {
	unlimited        runStats // Bench without limits, run just before never
	never            runStats // BenchLimited: a limit never reached
	unlimitedOwnJobs runStats // Bench, each step its own job, without limits
	saturated        runStats // BenchGrouped: a saturated limit
	// saturatedBase is Bench without limits, each step its own job, with as
	// many slots as the saturated run can have steps in progress (groups ×
	// the limit): the same concurrency, batches and run length
	saturatedBase runStats

	// River jobs per step of the saturated run and of the own-job run
	saturatedJobs, ownJobsJobs float64

	// by pair (-limit-pairs; the runs above pool the pairs): never ÷
	// unlimited, and the saturated run's PostgreSQL CPU per step less
	// saturatedBase's, in ms
	neverRatios, saturatedExtras []float64

	fair fairResult
}

// fairResult is the fairness run. The times run from the big group's first
// workflow's creation (the database's clock).
type fairResult struct {
	big, groups, small int
	smallCreated       time.Duration // the small groups' first workflow created
	smallDone          time.Duration // every small group's workflows finished
	bigByThen          int           // the big group's workflows finished by then
}

// limitRuns runs the limit throughput runs of one durability: without
// limits, a limit never reached, each step its own job without limits, a
// saturated limit; one after the other, with the same worker (which runs
// every type).
func (b *bench) limitRuns(ctx context.Context, p *profileResults) error {
	n := b.o.limitWorkflows
	if n <= 0 {
		return nil
	}
	config := func(inlineSteps int) childConfig {
		c := b.childConfig("geneva", b.o.workers, inlineSteps)
		c.limits = true
		return c
	}
	l := &p.limits
	pairs := max(b.o.limitPairs, 1)
	var (
		first, last int64
		err         error
	)
	// A limit never reached beside the same workflows without limits, in
	// pairs whose first run alternates; the rows pool them.
	var unlimited, never []runStats
	for i := range pairs {
		var u, nr runStats
		runUnlimited := func() error {
			if err := b.resetProfile(ctx); err != nil {
				return err
			}
			if u, _, _, err = b.runWorkflows(ctx, config(b.o.inlineSteps), "Bench", n, nil); err != nil {
				return fmt.Errorf("without limits: %w", err)
			}
			return b.printProfileOf(ctx, "without limits")
		}
		runNever := func() error {
			if err := b.resetProfile(ctx); err != nil {
				return err
			}
			if nr, _, _, err = b.runWorkflows(ctx, config(b.o.inlineSteps), "BenchLimited", n, nil); err != nil {
				return fmt.Errorf("a limit never reached: %w", err)
			}
			return b.printProfileOf(ctx, "a limit never reached")
		}
		if err := inPair(i, runUnlimited, runNever); err != nil {
			return err
		}
		unlimited, never = append(unlimited, u), append(never, nr)
		l.neverRatios = append(l.neverRatios, nr.rate()/u.rate())
	}
	l.unlimited, l.never = mergeRuns(unlimited...), mergeRuns(never...)
	if l.unlimitedOwnJobs, first, last, err = b.runWorkflows(ctx, config(-1), "Bench", n, nil); err != nil {
		return fmt.Errorf("each step its own job without limits: %w", err)
	}
	if l.ownJobsJobs, err = b.jobsPerStep(ctx, first, last); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "geneva-bench: %s: %d slots: without limits %.0f steps/s; a limit never reached %.0f (÷ without limits, by pair: %s); each step its own job %.0f\n",
		p.name, b.o.workers, l.unlimited.rate(), l.never.rate(), ratiosText(l.neverRatios, "%.2f"), l.unlimitedOwnJobs.rate())
	if b.o.limitGroups <= 0 {
		return nil
	}
	// A saturated limit beside each step its own job without limits at as
	// many slots as it has steps in progress, in pairs likewise.
	groups := b.o.limitGroups
	group := func(i int) string { return fmt.Sprintf("%s-%d", p.name, i%groups) }
	base := b.childConfig("geneva", groups*groupLimit, -1)
	base.limits = true
	var saturated, bases []runStats
	var jobs float64
	for i := range pairs {
		var s, sb runStats
		runSaturated := func() error {
			if err := b.resetProfile(ctx); err != nil {
				return err
			}
			if s, first, last, err = b.runWorkflows(ctx, config(b.o.inlineSteps), "BenchGrouped", n, group); err != nil {
				return fmt.Errorf("a saturated limit: %w", err)
			}
			if err := b.printProfileOf(ctx, "a saturated limit"); err != nil {
				return err
			}
			perStep, err := b.jobsPerStep(ctx, first, last)
			jobs += perStep * float64(s.units)
			return err
		}
		runBase := func() error {
			if sb, _, _, err = b.runWorkflows(ctx, base, "Bench", n, nil); err != nil {
				return fmt.Errorf("each step its own job without limits at %d slots: %w", groups*groupLimit, err)
			}
			return nil
		}
		if err := inPair(i, runSaturated, runBase); err != nil {
			return err
		}
		saturated, bases = append(saturated, s), append(bases, sb)
		if s.serverCPU > 0 && sb.serverCPU > 0 {
			l.saturatedExtras = append(l.saturatedExtras, s.cpuPerUnit(s.serverCPU)-sb.cpuPerUnit(sb.serverCPU))
		}
	}
	l.saturated, l.saturatedBase = mergeRuns(saturated...), mergeRuns(bases...)
	l.saturatedJobs = jobs / float64(max(l.saturated.units, 1))
	fmt.Fprintf(os.Stderr, "geneva-bench: %s: %d slots: a saturated limit (%d per group, %d groups) %.0f steps/s, %s PostgreSQL CPU ms/step (more than each step its own job at %d slots, by pair: %s), %.2f River jobs/step (%.2f)\n",
		p.name, b.o.workers, groupLimit, groups, l.saturated.rate(), serverCPUText(l.saturated), groups*groupLimit,
		ratiosText(l.saturatedExtras, "%+.3f"), l.saturatedJobs, l.ownJobsJobs)
	return nil
}

// inPair runs the i-th pair of a comparison: a then b, or b first in every
// other pair, so that neither always runs first.
func inPair(i int, a, b func() error) error {
	if i%2 == 1 {
		a, b = b, a
	}
	if err := a(); err != nil {
		return err
	}
	return b()
}

// resetProfile empties pg_stat_statements, with -profile.
func (b *bench) resetProfile(ctx context.Context) error {
	if !b.o.profile {
		return nil
	}
	_, err := b.pool.Exec(ctx, "create extension if not exists pg_stat_statements; select pg_stat_statements_reset()")
	return err
}

// printProfileOf prints the statements that took the most time since
// resetProfile, and empties the statistics again, with -profile.
func (b *bench) printProfileOf(ctx context.Context, run string) error {
	if !b.o.profile {
		return nil
	}
	fmt.Fprintf(os.Stderr, "geneva-bench: the statements of %s:\n", run)
	if err := b.printProfile(ctx); err != nil {
		return err
	}
	return b.resetProfile(ctx)
}

// jobsPerStep is the River jobs of the executions of workflows first..last
// over the steps of a run (-steps each): the jobs their executions name
// (a job is deleted when its step ends, so River's table no longer has
// them).
func (b *bench) jobsPerStep(ctx context.Context, first, last int64) (float64, error) {
	var jobs int64
	err := b.pool.QueryRow(ctx, `select count(distinct e.job_id) from geneva.step_executions e
		where e.workflow_id between $1 and $2`, first, last).Scan(&jobs)
	b.ownPolls.Add(1)
	return float64(jobs) / float64(max((last-first+1)*int64(b.o.steps), 1)), err
}

// fairness runs the fairness run of one durability: with a worker of
// -workers slots running, the big group's workflows are created, then the
// small groups' (a hundred a call), and it waits until every small
// group's have finished. Then the worker stops and the big group's
// unfinished workflows are canceled.
func (b *bench) fairness(ctx context.Context, p *profileResults) error {
	f := fairResult{big: b.o.fairBig, groups: b.o.fairGroups, small: b.o.fairSmall}
	if f.big <= 0 || f.groups <= 0 || f.small <= 0 {
		return nil
	}
	if err := b.settle(ctx); err != nil {
		return err
	}
	config := b.childConfig("geneva", b.o.workers, b.o.inlineSteps)
	config.limits = true
	worker, err := startChild(config)
	if err != nil {
		return err
	}
	bigGroup := p.name + "-big"
	first, _, err := b.createBatch(ctx, "BenchFair", f.big, func(int) string { return bigGroup })
	var firstSmall, last int64
	if err == nil {
		firstSmall, last, err = b.createBatch(ctx, "BenchFair", f.groups*f.small, func(i int) string {
			return fmt.Sprintf("%s-small-%d", p.name, i/f.small)
		})
	}
	if err == nil {
		err = b.waitFair(ctx, firstSmall, last)
	}
	if err == nil {
		err = b.readFair(ctx, first, last, bigGroup, &f)
	}
	if _, _, stopErr := worker.stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		return err
	}
	if err := b.cancelUnfinished(ctx, "BenchFair"); err != nil {
		return err
	}
	p.limits.fair = f
	fmt.Fprintf(os.Stderr, "geneva-bench: %s: fairness: %d groups of %d (created at %.2f s) all finished at %.2f s, when %d of the big group's %d had\n",
		p.name, f.groups, f.small, f.smallCreated.Seconds(), f.smallDone.Seconds(), f.bigByThen, f.big)
	return nil
}

// waitFair waits until every workflow of firstSmall..last has finished.
func (b *bench) waitFair(ctx context.Context, firstSmall, last int64) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var small int
		err := b.pool.QueryRow(ctx, `select count(*) from geneva.workflows
			where workflow_type = 'BenchFair' and id between $1 and $2 and finished_at is null`,
			firstSmall, last).Scan(&small)
		if err != nil {
			return err
		}
		b.ownPolls.Add(1)
		if small == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after 10 minutes, %d small groups' workflows are unfinished", small)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readFair reads the fairness run's times from the workflows' created_at and
// finished_at.
func (b *bench) readFair(ctx context.Context, first, last int64, bigGroup string, f *fairResult) error {
	var created, done float64
	err := b.pool.QueryRow(ctx, `
		with w as (
		  select group_name = $3 as big, created_at, finished_at
		  from geneva.workflows where workflow_type = 'BenchFair' and id between $1 and $2
		),
		t as (select min(created_at) as start from w),
		small as (select min(created_at) as created, max(finished_at) as done from w where not big)
		select extract(epoch from small.created - t.start)::float8, extract(epoch from small.done - t.start)::float8,
		  (select count(*) from w where big and finished_at <= small.done)
		from t, small`, first, last, bigGroup).Scan(&created, &done, &f.bigByThen)
	b.ownPolls.Add(1)
	seconds := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	f.smallCreated, f.smallDone = seconds(created), seconds(done)
	return err
}

// cancelUnfinished cancels the type's unfinished workflows, with no worker
// running, in one statement, and checks that none is left.
func (b *bench) cancelUnfinished(ctx context.Context, workflowType string) error {
	_, err := b.pool.Exec(ctx, `select geneva.cancel_workflow(id) from geneva.workflows
		where workflow_type = $1 and state in ('ready', 'paused') order by id`, workflowType)
	if err != nil {
		return err
	}
	var left int
	err = b.pool.QueryRow(ctx, `select count(*) from geneva.workflows
		where workflow_type = $1 and state in ('ready', 'performing', 'paused')`, workflowType).Scan(&left)
	if err == nil && left > 0 {
		err = fmt.Errorf("%d %s workflows left unfinished after canceling", left, workflowType)
	}
	return err
}

// serverCPUText is PostgreSQL's CPU ms per step of a run ("n/a" when not seen).
func serverCPUText(s runStats) string {
	if s.serverCPU <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", s.cpuPerUnit(s.serverCPU))
}

// limitRows adds the limit runs' rows to the throughput table.
func limitRows(o options, row func(label string, value func(p *profileResults) string)) {
	if o.limitWorkflows > 0 {
		row(fmt.Sprintf("without limits, %d slots, steps/s (run beside the limit runs)", o.workers), func(p *profileResults) string {
			return rateText(p.limits.unlimited)
		})
		row(fmt.Sprintf("limit defined, never reached (concurrency %d by type), %d slots, steps/s (÷ without limits; ÷ each step its own job)", neverReached, o.workers),
			func(p *profileResults) string { return p.limits.neverText() })
		row(fmt.Sprintf("each step its own job, without limits, %d slots, steps/s (run beside the limit runs)", o.workers), func(p *profileResults) string {
			return rateText(p.limits.unlimitedOwnJobs)
		})
	}
	if o.limitWorkflows > 0 && o.limitGroups > 0 {
		row(fmt.Sprintf("limit saturated (concurrency %d by group, %d groups), %d slots, steps/s", groupLimit, o.limitGroups, o.workers), func(p *profileResults) string {
			return rateText(p.limits.saturated)
		})
		row(fmt.Sprintf("limit saturated: PostgreSQL CPU ms/step (more than each step its own job without limits, at %d slots; at %d)", groupLimit*o.limitGroups, o.workers), func(p *profileResults) string {
			return p.limits.cpuText()
		})
		row("limit saturated: River jobs per step (each step its own job without limits)", func(p *profileResults) string {
			return p.limits.jobsText()
		})
	}
	if o.fairBig > 0 && o.fairGroups > 0 && o.fairSmall > 0 {
		row(fmt.Sprintf("fairness (concurrency %d by group): %d groups of %d, created after a group of %d, all finished (s from the start)", groupLimit, o.fairGroups, o.fairSmall, o.fairBig),
			func(p *profileResults) string { return p.limits.fair.doneText() })
		row(fmt.Sprintf("fairness: the group of %d's workflows finished by then (bar: fewer than %d)", o.fairBig, fairBar), func(p *profileResults) string {
			return p.limits.fair.byThenText()
		})
	}
}

// limitCosts adds the limit runs' rows to a durability's cost table.
func limitCosts(o options, p *profileResults, cost func(label string, s runStats)) {
	l := p.limits
	cost(fmt.Sprintf("without limits, %d slots (beside the limit runs)", o.workers), l.unlimited)
	cost(fmt.Sprintf("limit never reached (concurrency %d by type), %d slots", neverReached, o.workers), l.never)
	cost(fmt.Sprintf("each step its own job, without limits, %d slots (beside the limit runs)", o.workers), l.unlimitedOwnJobs)
	cost(fmt.Sprintf("limit saturated (concurrency %d by group, %d groups), %d slots", groupLimit, o.limitGroups, o.workers), l.saturated)
}

// limitsProse says how the limit rows were measured.
func limitsProse(o options) string {
	var b strings.Builder
	if o.limitWorkflows > 0 {
		fmt.Fprintf(&b, "The limit rows measure a concurrency limit (`WorkflowOpts.Concurrency`, checked in SQL when a step is claimed), after each column's throughput runs, on its settings: "+
			"each run creates %d workflows of %d no-op steps at once with a worker of %d slots (which knows every type of these runs) and waits until they are finished. "+
			"\"Never reached\": the headline's workflow with a concurrency of %d by type; it is compared with the same workflows without limits, and with every step its own River job without limits: "+
			"the runs without limits in pairs with it, each pair's first run alternating, and every step its own River job without limits run after them (a step held to a limit runs inline only when its step before it carries its slot over: the type's concurrency its only limit, no one waiting for the key).",
			o.limitWorkflows, o.steps, o.workers, neverReached)
		if o.limitGroups > 0 {
			fmt.Fprintf(&b, " \"Saturated\": the same workflows with a concurrency of %d by group, spread over %d groups (at most %d steps in progress of %d slots; the others wait, without a River job, until a slot of their group frees and passes them one, which the worker that freed it runs next in the same job when it can, or else gets a River job); "+
				"its PostgreSQL CPU per step (the cost table's) is compared first with every step its own job without limits with %d slots, the saturated run's steps in progress (the same concurrency, batches and run length; in pairs with it, likewise), then with the same at %d slots, and its River jobs per step are the jobs its executions name (`job_id`) over its steps.",
				groupLimit, o.limitGroups, groupLimit*o.limitGroups, o.workers, groupLimit*o.limitGroups, o.workers)
		}
		if o.limitPairs > 1 {
			fmt.Fprintf(&b, " Each comparison ran %d pairs: its row pools them (all their steps over all their time; figures per step weighted by steps) and shows each pair's figure in the order they ran; the cost table's rows pool them too.", o.limitPairs)
		}
	}
	if o.fairBig > 0 && o.fairGroups > 0 && o.fairSmall > 0 {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "Fairness: workflows of one no-op step with a concurrency of %d by group; with a worker of %d slots running, %d workflows of one group are created (a hundred a call), then %d groups of %d; "+
			"the times run from the first workflow's `created_at` to the small groups' last `finished_at` (the database's clock), and the big group's workflows finished by then are counted "+
			"(the bar: every small group finishes before the big group's %dth). The big group's unfinished workflows are then canceled.",
			groupLimit, o.workers, o.fairBig, o.fairGroups, o.fairSmall, fairBar)
	}
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	return b.String()
}

// rateText formats a run's steps/s ("—" when it did not run).
func rateText(s runStats) string {
	if s.units == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", s.rate())
}

// ratioText formats a ÷ b ("—" when either did not run).
func ratioText(a, b runStats) string {
	if a.units == 0 || b.rate() <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a.rate()/b.rate())
}

// neverText is the limit never reached's steps/s and its ratios to the runs
// without limits.
func (l limitResults) neverText() string {
	if l.never.units == 0 {
		return "—"
	}
	text := fmt.Sprintf("**%.0f** (%s; %s", l.never.rate(), ratioText(l.never, l.unlimited), ratioText(l.never, l.unlimitedOwnJobs))
	if len(l.neverRatios) > 1 {
		text += "; by pair " + ratiosText(l.neverRatios, "%.2f×")
	}
	return text + ")"
}

// cpuText is the saturated limit's PostgreSQL CPU per step and how much more
// it is than every step its own job without limits.
func (l limitResults) cpuText() string {
	if l.saturated.units == 0 {
		return "—"
	}
	if l.saturated.serverCPU <= 0 || l.unlimitedOwnJobs.units == 0 || l.unlimitedOwnJobs.serverCPU <= 0 {
		return serverCPUText(l.saturated)
	}
	extra := l.saturated.cpuPerUnit(l.saturated.serverCPU) - l.unlimitedOwnJobs.cpuPerUnit(l.unlimitedOwnJobs.serverCPU)
	if l.saturatedBase.units == 0 || l.saturatedBase.serverCPU <= 0 {
		return fmt.Sprintf("%s (%+.3f)", serverCPUText(l.saturated), extra)
	}
	same := l.saturated.cpuPerUnit(l.saturated.serverCPU) - l.saturatedBase.cpuPerUnit(l.saturatedBase.serverCPU)
	if len(l.saturatedExtras) > 1 {
		return fmt.Sprintf("%s (**%+.3f**, by pair %s; %+.3f)", serverCPUText(l.saturated), same, ratiosText(l.saturatedExtras, "%+.3f"), extra)
	}
	return fmt.Sprintf("%s (**%+.3f**; %+.3f)", serverCPUText(l.saturated), same, extra)
}

// jobsText is the saturated limit's River jobs per step, and every step its
// own job's without limits.
func (l limitResults) jobsText() string {
	if l.saturated.units == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f (%.2f)", l.saturatedJobs, l.ownJobsJobs)
}

// doneText is when every small group had finished, and when they were
// created.
func (f fairResult) doneText() string {
	if f.big == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f s (created at %.1f s)", f.smallDone.Seconds(), f.smallCreated.Seconds())
}

// byThenText is the big group's workflows finished when every small group
// had.
func (f fairResult) byThenText() string {
	if f.big == 0 {
		return "—"
	}
	return fmt.Sprintf("**%d**", f.bigByThen)
}

// ratiosText formats figures by pair, in the order they ran.
func ratiosText(figures []float64, format string) string {
	texts := make([]string, len(figures))
	for i, f := range figures {
		texts[i] = fmt.Sprintf(format, f)
	}
	return strings.Join(texts, ", ")
}
