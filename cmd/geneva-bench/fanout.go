package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// The fan-out runs measure children and their join (docs/children.md), at
// each durability after its throughput runs, with -workers slots:
//   - one parent fans out -fanout-children children of one no-op step and
//     joins: BenchFanout's first step starts them (Step.StartChildren:
//     created with its success, in one transaction), its second awaits
//     them all (worker.JoinAll); every child's end counts on a stripe of
//     the parent's counts (geneva.children_stripes: the 10,000 spread over
//     16), the first no other transaction holds, and only a stripe's last
//     end takes the parent's row lock (docs/children.md, "How ends are
//     counted"). The children's steps/s is compared
//     with every step its own job (Bench, InlineSteps -1, as many steps)
//     and with the same one-step workflows without a parent, by the same
//     worker configuration: the three in -fanout-rounds rounds, each a span
//     of its own, the order rotated each round (a run's rate swings from
//     one span to the next on a shared machine: the rows pool the rounds
//     and show each round's ratio);
//   - where the parent's cost lies, creation or ends: the same children
//     created beforehand (by the benchmark, a hundred a call, with no
//     worker running), then a worker started and timed from the first
//     child's step's start to the last one's end, as River's ceiling is
//     (genevaCeilingRun), beside the same without a parent;
//   - the join's latency, from the last child's end to the join step's
//     start, needs many parents for its p50 and p99: -fanout-parents
//     parents share as many children (-fanout-children ÷ -fanout-parents
//     each), one parent after another, each created when the one before
//     it has finished, so that each join is measured as the one parent's
//     is, its own children the only work (parents at once would measure
//     the queue: a join made due waits behind the other parents' children
//     whose jobs came first); the one parent's own latency is shown beside
//     them.

const (
	// fanoutParent is the parent's type, fanoutChild the children's.
	fanoutParent = "BenchFanout"
	fanoutChild  = "BenchChild"
	// fanoutPerCall is how many children one create_workflows call creates
	// when the benchmark creates them beforehand.
	fanoutPerCall = 100
)

// fanoutWorkflows are the fan-out runs' types: a parent whose first step
// starts the children its hero id asks for ("<children>:<n>") with its
// success (Step.StartChildren: created in the transaction that records
// it), and whose second joins them all; and the children's, one no-op
// step.
func fanoutWorkflows() []*worker.Workflow {
	parent := worker.NewWorkflow(fanoutParent, nil).
		Step("fan_out", func(ctx context.Context, step *worker.Step) error {
			return startChildren(step)
		}, nil).
		Step("join", func(ctx context.Context, step *worker.Step) error { return nil },
			&worker.StepOpts{Await: &worker.Await{Children: worker.JoinAll, Timeout: time.Hour}})
	return []*worker.Workflow{parent, noopWorkflow(fanoutChild, 1, nil)}
}

// fanoutHero is the hero id of the n-th parent of the given number of
// children: the parent's step reads the number from it.
func fanoutHero(children int, n string) string { return fmt.Sprintf("%d:%s", children, n) }

// startChildren starts the children a parent's hero id asks for.
func startChildren(step *worker.Step) error {
	count, _, _ := strings.Cut(step.HeroID, ":")
	n, err := strconv.Atoi(count)
	if err != nil {
		return fmt.Errorf("fan-out: hero %q names no number of children", step.HeroID)
	}
	children := make([]worker.Child, n)
	for i := range children {
		children[i] = worker.Child{Type: fanoutChild, HeroType: "User", HeroID: fmt.Sprintf("%d-%d", step.WorkflowID, i)}
	}
	step.StartChildren(children...)
	return nil
}

// fanoutResults are the fan-out runs at one durability.
type fanoutResults struct {
	// rounds are the three timed spans' rounds (-fanout-rounds), in the
	// order they ran
	rounds []fanoutRound
	// the rounds pooled (mergeRuns: all their steps over all their time)
	ownJobs runStats // Bench, each step its own job, as many steps as the children
	roots   runStats // the same one-step workflows without a parent
	one     runStats // one parent's children
	// manyJoin is the many parents' join latency (the one parent's is each
	// round's)
	manyJoin latency
	// the children's ends alone: created beforehand, with their parent and
	// without one (run once, after the rounds)
	endsOnly, rootsEndsOnly runStats
}

// fanoutRound is one round of the three timed spans.
type fanoutRound struct {
	ownJobs, roots, one runStats
	// the time from each run's first workflow's creation to its last one's
	// (the steps run meanwhile)
	ownJobsCreated, rootsCreated, oneCreated time.Duration
	// oneFirstStep is the time from the one parent's children's creation's
	// start (their created_at: the parent's end's transaction) to their
	// first step's start: their creation, its commit and River's fetch,
	// when none of them runs
	oneFirstStep time.Duration
	// oneJoin is the one parent's join latency
	oneJoin latency
}

// pool sets the pooled runs from the rounds.
func (f *fanoutResults) pool() {
	var ownJobs, roots, one []runStats
	for _, r := range f.rounds {
		ownJobs, roots, one = append(ownJobs, r.ownJobs), append(roots, r.roots), append(one, r.one)
	}
	f.ownJobs, f.roots, f.one = mergeRuns(ownJobs...), mergeRuns(roots...), mergeRuns(one...)
}

// meanOf is the mean over the rounds of a duration of each.
func (f fanoutResults) meanOf(d func(r fanoutRound) time.Duration) time.Duration {
	if len(f.rounds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, r := range f.rounds {
		sum += d(r)
	}
	return sum / time.Duration(len(f.rounds))
}

// roundsText is each round's figure, in the order they ran, " / " between.
func (f fanoutResults) roundsText(figure func(r fanoutRound) string) string {
	texts := make([]string, len(f.rounds))
	for i, r := range f.rounds {
		texts[i] = figure(r)
	}
	return strings.Join(texts, " / ")
}

// fanoutRuns runs the fan-out runs of one durability, one after the other,
// with the same worker configuration (which runs every type): in each of
// -fanout-rounds rounds each step its own job, the children without a
// parent and one parent, the first of them rotated each round (round i
// starts with the i-th, so that no run always comes first or last); then,
// once, the ends alone without a parent and with one, many parents one
// after another.
func (b *bench) fanoutRuns(ctx context.Context, p *profileResults) error {
	n := b.o.fanoutChildren
	if n <= 0 {
		return nil
	}
	config := func(inlineSteps int) childConfig {
		c := b.childConfig("geneva", b.o.workers, inlineSteps)
		c.fanout = true
		return c
	}
	f := &p.fanout
	var err error
	for i := range max(b.o.fanoutRounds, 1) {
		var r fanoutRound
		began := time.Now()
		spans := []func() error{
			func() (err error) {
				// Each step its own job: as many steps as children, in -steps-step workflows.
				if r.ownJobs, r.ownJobsCreated, err = b.spanRun(ctx, config(-1), "Bench", max(n/max(b.o.steps, 1), 1)); err != nil {
					return fmt.Errorf("each step its own job: %w", err)
				}
				return nil
			},
			func() (err error) {
				if r.roots, r.rootsCreated, err = b.spanRun(ctx, config(b.o.inlineSteps), fanoutChild, n); err != nil {
					return fmt.Errorf("one-step workflows without a parent: %w", err)
				}
				return nil
			},
			func() (err error) {
				if r.one, r.oneCreated, r.oneFirstStep, r.oneJoin, err = b.fanoutRun(ctx, config(b.o.inlineSteps), n); err != nil {
					return fmt.Errorf("one parent: %w", err)
				}
				return nil
			},
		}
		for k := range spans {
			if err := spans[(i+k)%len(spans)](); err != nil {
				return fmt.Errorf("round %d: %w", i+1, err)
			}
		}
		f.rounds = append(f.rounds, r)
		fmt.Fprintf(os.Stderr, "geneva-bench: %s: fan-out, round %d: one parent's %d children %.0f steps/s, each step its own job %.0f, without a parent %.0f (÷ each step its own job %s); the round took %s\n",
			p.name, i+1, n, r.one.rate(), r.ownJobs.rate(), r.roots.rate(), ratioText(r.one, r.ownJobs), time.Since(began).Round(100*time.Millisecond))
	}
	f.pool()
	if f.rootsEndsOnly, err = b.createdBeforehand(ctx, config(b.o.inlineSteps), n, false); err != nil {
		return fmt.Errorf("one-step workflows without a parent, created beforehand: %w", err)
	}
	if f.endsOnly, err = b.createdBeforehand(ctx, config(b.o.inlineSteps), n, true); err != nil {
		return fmt.Errorf("one parent's children, created beforehand: %w", err)
	}
	if parents := b.o.fanoutParents; parents > 1 {
		if f.manyJoin, err = b.fanoutSerial(ctx, config(b.o.inlineSteps), parents, max(n/parents, 1)); err != nil {
			return fmt.Errorf("%d parents: %w", parents, err)
		}
	}
	fmt.Fprintf(os.Stderr, "geneva-bench: %s: fan-out, %d slots: one parent's %d children %.0f steps/s (÷ each step its own job %s pooled, by round %s; ÷ without a parent %s), join %s ms; created beforehand %.0f (÷ without a parent %s); %d parents one after another, join %s\n",
		p.name, b.o.workers, n, f.one.rate(), ratioText(f.one, f.ownJobs), f.roundsText(func(r fanoutRound) string { return ratioText(r.one, r.ownJobs) }),
		ratioText(f.one, f.roots), f.roundsText(func(r fanoutRound) string { return fmt.Sprintf("%.1f", r.oneJoin.p50) }),
		f.endsOnly.rate(), ratioText(f.endsOnly, f.rootsEndsOnly), b.o.fanoutParents, f.manyJoin)
	return nil
}

// spanRun creates n workflows of the type (a hundred a call) while a worker
// of the configuration runs, waits until they are finished, and times
// their steps as the fan-out runs time the children (childrenSpan). It
// settles once, in measure (it settled twice before -fanout-rounds: the
// second VACUUM and CHECKPOINT found nothing to do).
func (b *bench) spanRun(ctx context.Context, config childConfig, workflowType string, n int) (stats runStats, created time.Duration, err error) {
	stats, err = b.measure(ctx, config, func(ctx context.Context) (int, time.Duration, error) {
		first, last, err := b.createBatch(ctx, workflowType, n, nil)
		if err == nil {
			err = b.waitFinished(ctx, workflowType, 10*time.Minute)
		}
		if err != nil {
			return 0, 0, err
		}
		var (
			steps int
			took  time.Duration
		)
		steps, took, created, err = b.childrenSpan(ctx, `w.id between $1 and $2`, first, last)
		return steps, took, err
	})
	return stats, created, err
}

// childrenSpan counts the completed steps of the workflows the condition
// (on geneva.workflows w, with $1 and $2) selects, and the time from the
// first one's creation to the last step's end (the database's clock: each
// is its transaction's start), and the time from the first one's creation
// to the last one's.
func (b *bench) childrenSpan(ctx context.Context, where string, arg1, arg2 any) (steps int, took, created time.Duration, err error) {
	var seconds, creating float64
	err = b.polls.QueryRow(ctx, `
		with w as (select w.id, w.created_at from geneva.workflows w where `+where+`)
		select count(*)::int,
		  coalesce(extract(epoch from max(e.finished_at) - (select min(created_at) from w)), 0)::float8,
		  (select coalesce(extract(epoch from max(created_at) - min(created_at)), 0)::float8 from w)
		from w join geneva.step_executions e on e.workflow_id = w.id and e.state = 'completed'`,
		arg1, arg2).Scan(&steps, &seconds, &creating)
	b.ownPolls.Add(1)
	return steps, time.Duration(seconds * float64(time.Second)), time.Duration(creating * float64(time.Second)), err
}

// fanoutRun creates one parent of the given children while a worker of the
// configuration runs, and waits until it has joined them and finished. It
// returns the children's steps over the time from the first child's
// creation to the last child's end, and the join's latency (joinLatencies).
// It settles once, in measure, as spanRun.
func (b *bench) fanoutRun(ctx context.Context, config childConfig, children int) (stats runStats, created, firstStep time.Duration, join latency, err error) {
	var parent int64
	stats, err = b.measure(ctx, config, func(ctx context.Context) (int, time.Duration, error) {
		var err error
		if parent, err = b.fanOut(ctx, children); err != nil {
			return 0, 0, err
		}
		var (
			steps int
			took  time.Duration
		)
		steps, took, created, err = b.childrenSpan(ctx, `w.parent_id = $1 and $2`, parent, true)
		if err == nil && steps != children {
			err = fmt.Errorf("%d children's steps completed, not %d", steps, children)
		}
		return steps, took, err
	})
	if err != nil {
		return stats, 0, 0, latency{}, err
	}
	var seconds float64
	err = b.polls.QueryRow(ctx, `select coalesce(extract(epoch from min(e.started_at) - min(w.created_at)), 0)::float8
		from geneva.workflows w join geneva.step_executions e on e.workflow_id = w.id
		where w.parent_id = $1`, parent).Scan(&seconds)
	b.ownPolls.Add(1)
	if err != nil {
		return stats, 0, 0, latency{}, err
	}
	firstStep = time.Duration(seconds * float64(time.Second))
	join, err = b.joinLatencies(ctx, parent, parent, 1)
	return stats, created, firstStep, join, err
}

// createdBeforehand creates n one-step workflows, children of one parent
// (itself created first, to fan out none) or without one, a hundred a call,
// with no worker running; then a worker of the configuration runs them,
// timed from the first one's step's start to the last one's end.
func (b *bench) createdBeforehand(ctx context.Context, config childConfig, n int, withParent bool) (runStats, error) {
	if err := b.settle(ctx); err != nil {
		return runStats{}, err
	}
	client := goclient.New(b.pool)
	var parent int64
	if withParent {
		var err error
		if parent, err = client.CreateWorkflow(ctx, fanoutParent, "User", fanoutHero(0, b.hero()), nil); err != nil {
			return runStats{}, err
		}
	}
	var first, last int64
	for done := 0; done < n; done += fanoutPerCall {
		heroes := make([]string, min(fanoutPerCall, n-done))
		for i := range heroes {
			heroes[i] = "early-" + b.hero()
		}
		ids, err := client.CreateWorkflows(ctx, fanoutChild, "User", heroes, &goclient.CreateWorkflowsOpts{ParentID: parent})
		if err != nil {
			return runStats{}, err
		}
		if first == 0 {
			first = ids[0]
		}
		last = ids[len(ids)-1]
	}
	return b.measure(ctx, config, func(ctx context.Context) (int, time.Duration, error) {
		if err := b.waitFinished(ctx, fanoutChild, 10*time.Minute); err != nil {
			return 0, 0, err
		}
		if err := b.waitFinished(ctx, fanoutParent, time.Minute); err != nil {
			return 0, 0, err
		}
		var (
			seconds float64
			steps   int
		)
		err := b.polls.QueryRow(ctx, `select extract(epoch from max(finished_at) - min(started_at))::float8, count(*)::int
			from geneva.step_executions where workflow_id between $1 and $2 and state = 'completed'`, first, last).Scan(&seconds, &steps)
		b.ownPolls.Add(1)
		if err == nil && steps != n {
			err = fmt.Errorf("%d steps completed, not %d", steps, n)
		}
		return steps, time.Duration(seconds * float64(time.Second)), err
	})
}

// fanOut creates a parent of the given children and waits until it has
// joined them and finished.
func (b *bench) fanOut(ctx context.Context, children int) (int64, error) {
	id, err := goclient.New(b.pool).CreateWorkflow(ctx, fanoutParent, "User", fanoutHero(children, b.hero()), nil)
	if err != nil {
		return 0, err
	}
	if err := b.waitFinished(ctx, fanoutParent, 10*time.Minute); err != nil {
		return 0, err
	}
	return id, b.waitFinished(ctx, fanoutChild, time.Minute)
}

// fanoutSerial runs the parents one after another with one worker of the
// configuration, each fanning out the given children, and returns their
// joins' latencies.
func (b *bench) fanoutSerial(ctx context.Context, config childConfig, parents, children int) (latency, error) {
	if err := b.settle(ctx); err != nil {
		return latency{}, err
	}
	worker, err := startChild(config)
	if err != nil {
		return latency{}, err
	}
	var first, last int64
	for i := 0; i < parents && err == nil; i++ {
		if last, err = b.fanOut(ctx, children); first == 0 {
			first = last
		}
	}
	if _, _, stopErr := worker.stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		return latency{}, err
	}
	return b.joinLatencies(ctx, first, last, parents)
}

// joinLatencies reads the join latency of each parent first..last: from
// its last child's end (or its first step's end, when later: the join
// cannot begin before) to its join step's start.
func (b *bench) joinLatencies(ctx context.Context, first, last int64, parents int) (latency, error) {
	rows, err := b.polls.Query(ctx, `
		select extract(epoch from j.started_at - greatest(c.last_end, s.finished_at))::float8
		from geneva.workflows p
		cross join lateral (select max(coalesce(w.finished_at, w.canceled_at)) as last_end
		  from geneva.workflows w where w.parent_id = p.id) c
		join geneva.step_executions s on s.workflow_id = p.id and s.step_name = 'fan_out' and s.state = 'completed'
		join geneva.step_executions j on j.workflow_id = p.id and j.step_name = 'join' and j.state = 'completed'
		where p.id between $1 and $2 and p.workflow_type = $3`, first, last, fanoutParent)
	if err != nil {
		return latency{}, err
	}
	defer rows.Close()
	b.ownPolls.Add(1)
	var lags []time.Duration
	for rows.Next() {
		var seconds float64
		if err := rows.Scan(&seconds); err != nil {
			return latency{}, err
		}
		lags = append(lags, time.Duration(seconds*float64(time.Second)))
	}
	if err := rows.Err(); err != nil {
		return latency{}, err
	}
	if len(lags) != parents {
		return latency{}, fmt.Errorf("%d of %d parents joined", len(lags), parents)
	}
	return percentiles(lags), nil
}

// fanoutRows adds the fan-out runs' rows to the throughput table.
func fanoutRows(o options, row func(label string, value func(p *profileResults) string)) {
	n := o.fanoutChildren
	if n <= 0 {
		return
	}
	row(fmt.Sprintf("fan-out: one parent, %d children of one no-op step, %d slots, children's steps/s%s (÷ each step its own job, bar ≥ 0.9×%s; ÷ the same workflows without a parent)", n, o.workers, roundsLabel(o), byRoundLabel(o)),
		func(p *profileResults) string { return p.fanout.oneText() })
	row(fmt.Sprintf("each step its own job, %d slots, steps/s (%d workflows × %d steps, run beside the fan-out runs%s)", o.workers, max(n/max(o.steps, 1), 1), o.steps, roundsLabel(o)),
		func(p *profileResults) string {
			return p.fanout.createdText(p.fanout.ownJobs, func(r fanoutRound) (runStats, time.Duration) { return r.ownJobs, r.ownJobsCreated })
		})
	row(fmt.Sprintf("the same %d one-step workflows without a parent, %d slots, steps/s%s", n, o.workers, roundsLabel(o)),
		func(p *profileResults) string {
			return p.fanout.createdText(p.fanout.roots, func(r fanoutRound) (runStats, time.Duration) { return r.roots, r.rootsCreated })
		})
	row(fmt.Sprintf("fan-out: the same %d children created beforehand, their ends alone, steps/s (÷ the same workflows without a parent, created beforehand)", n),
		func(p *profileResults) string { return p.fanout.endsOnlyText() })
	each := ""
	if o.fanoutRounds > 1 {
		each = ", each round"
	}
	row(fmt.Sprintf("fan-out: the last child's end → the join step's start, p50 / p99 (ms) (bar: p99 ≤ 50; %d parents of %d, one after another; the one parent of %d%s)", o.fanoutParents, max(n/max(o.fanoutParents, 1), 1), n, each),
		func(p *profileResults) string { return p.fanout.joinText() })
}

// roundsLabel says, in a row's label, that the row pools the rounds.
func roundsLabel(o options) string {
	if o.fanoutRounds > 1 {
		return fmt.Sprintf(", %d rounds pooled", o.fanoutRounds)
	}
	return ""
}

// byRoundLabel says, in a row's label, that the ratio is shown by round too.
func byRoundLabel(o options) string {
	if o.fanoutRounds > 1 {
		return ", pooled and by round"
	}
	return ""
}

// oneText is the one parent's children's steps/s and its ratios: pooled,
// and each round's.
func (f fanoutResults) oneText() string {
	if f.one.units == 0 {
		return "—"
	}
	ratio := fmt.Sprintf("**%s**", ratioText(f.one, f.ownJobs))
	if len(f.rounds) > 1 {
		ratio = fmt.Sprintf("**%s** pooled; rounds %s", ratioText(f.one, f.ownJobs), f.roundsText(func(r fanoutRound) string { return ratioText(r.one, r.ownJobs) }))
	}
	return fmt.Sprintf("**%.0f** (%s; ÷ without a parent %s; their first step %.1f s after their creation began)", f.one.rate(), ratio, ratioText(f.one, f.roots),
		f.meanOf(func(r fanoutRound) time.Duration { return r.oneFirstStep }).Seconds())
}

// endsOnlyText is the children's ends alone and their ratio to the same
// without a parent.
func (f fanoutResults) endsOnlyText() string {
	if f.endsOnly.units == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f (%s; %.0f)", f.endsOnly.rate(), ratioText(f.endsOnly, f.rootsEndsOnly), f.rootsEndsOnly.rate())
}

// createdText is a kind of run's pooled steps/s, how long its workflows'
// creation took (the rounds' mean) and, with more than one round, each
// round's steps/s.
func (f fanoutResults) createdText(pooled runStats, of func(r fanoutRound) (runStats, time.Duration)) string {
	if pooled.units == 0 {
		return "—"
	}
	created := f.meanOf(func(r fanoutRound) time.Duration { _, d := of(r); return d })
	text := fmt.Sprintf("%.0f (created in %.1f s", pooled.rate(), created.Seconds())
	if len(f.rounds) > 1 {
		text += "; rounds " + f.roundsText(func(r fanoutRound) string { s, _ := of(r); return fmt.Sprintf("%.0f", s.rate()) })
	}
	return text + ")"
}

// joinText is the many parents' join latencies and the one parent's, each
// round's.
func (f fanoutResults) joinText() string {
	if len(f.rounds) == 0 || f.rounds[0].oneJoin.n == 0 {
		return "—"
	}
	texts := make([]string, len(f.rounds))
	for i, r := range f.rounds {
		texts[i] = fmt.Sprintf("%.1f", r.oneJoin.p50)
	}
	one := strings.Join(texts, ", ")
	if f.manyJoin.n == 0 {
		return one
	}
	return fmt.Sprintf("**%.1f / %.1f** (n=%d); %s", f.manyJoin.p50, f.manyJoin.p99, f.manyJoin.n, one)
}

// fanoutCosts adds the fan-out runs' rows to a durability's cost table: the
// rounds' runs pooled (mergeRuns), as the throughput rows.
func fanoutCosts(o options, p *profileResults, cost func(label string, s runStats)) {
	f := p.fanout
	pooled := roundsLabel(o)
	cost(fmt.Sprintf("each step its own job, %d slots (beside the fan-out runs%s)", o.workers, pooled), f.ownJobs)
	cost(fmt.Sprintf("%d one-step workflows without a parent, %d slots%s", o.fanoutChildren, o.workers, pooled), f.roots)
	cost(fmt.Sprintf("fan-out: one parent's %d children, %d slots%s", o.fanoutChildren, o.workers, pooled), f.one)
	cost(fmt.Sprintf("%d one-step workflows without a parent, created beforehand, %d slots", o.fanoutChildren, o.workers), f.rootsEndsOnly)
	cost(fmt.Sprintf("fan-out: one parent's %d children, created beforehand, %d slots", o.fanoutChildren, o.workers), f.endsOnly)
}

// fanoutProse says how the fan-out rows were measured.
func fanoutProse(o options) string {
	n := o.fanoutChildren
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The fan-out rows measure children and their join ([docs/children.md](../docs/children.md)), after each column's throughput runs, on its settings, with a worker of %d slots (which knows every type of these runs), each run after a VACUUM and a CHECKPOINT. "+
		"One parent: a workflow whose first step starts %d children of one no-op step (`Step.StartChildren`: created with its success, in the transaction that records it) and whose second step joins them (`worker.Await{Children: worker.JoinAll}`); every child's end counts on a stripe of the parent's counts, the first no other transaction holds, and only a stripe's last end takes the parent's row lock. "+
		"The children's steps/s is their steps over the time from the first child's `created_at` to the last child's step's `finished_at` (the database's clock, each its transaction's start); "+
		"it is compared with every step its own River job (%d workflows of %d no-op steps, InlineSteps -1: a child's one step always has its own job) and with the same %d one-step workflows without a parent, both created by the benchmark %d a call and timed the same way. \"Created in\" is the time from a run's first workflow's `created_at` to its last one's: the steps run meanwhile. "+
		"The children are created in one transaction (their `created_at` its start, one for all), and none runs before it commits: \"their first step … after their creation began\" is the time from their `created_at` to the first child's step's `started_at` (their creation, its commit and River's fetch), within their timed span. "+
		"%s"+
		"To tell the children's creation from their ends, the same children are then created beforehand (the parent first, whose first step then creates none; the children by the benchmark, %d a call, with no worker running), and a worker runs them, timed from the first child's step's `started_at` to the last one's `finished_at` as River's ceiling is; beside the same without a parent, run just before it.",
		o.workers, n, max(n/max(o.steps, 1), 1), o.steps, n, fanoutPerCall, fanoutRoundsProse(o), fanoutPerCall)
	if o.fanoutParents > 1 {
		fmt.Fprintf(&b, " The join's latency needs many parents: %d parents, one after another with one worker (each created when the one before it has finished, so that its own children are the only work, as the one parent's are; "+
			"parents at once would measure the queue: a join made due waits behind the other parents' children whose River jobs came first), each fans out %d children and joins them; "+
			"a parent's latency runs from its last child's `finished_at` (or its first step's end, when later) to its join step's `started_at` (the database's clock: the join's start waits for the commit of the last child's end, which made it due), "+
			"and the row gives their p50 / p99, then the one parent's own.", o.fanoutParents, max(n/o.fanoutParents, 1))
	}
	b.WriteString("\n\n")
	return b.String()
}

// fanoutRoundsProse says how the three timed runs were run: in rounds, or
// once.
func fanoutRoundsProse(o options) string {
	if o.fanoutRounds <= 1 {
		return "The three ran once, one after the other: each step its own job, without a parent, the one parent. "
	}
	return fmt.Sprintf("The three ran in %d rounds, each run a span of its own (a worker started and stopped for it, after a VACUUM and a CHECKPOINT), the order rotated each round (each step its own job, without a parent, the one parent; then without a parent, the one parent, each step its own job; and so on), so that no run always comes first or last: "+
		"the rows pool the rounds (all their steps over all their time), the bar's ratio is the pooled figures', the rounds' own ratios and steps/s follow in the order the rounds ran, and \"created in\" and \"their first step\" are the rounds' means; "+
		"the cost table's rows of these three pool the rounds too (figures per step weighted by steps), and the one parent's join latency is each round's, in order. "+
		"The runs that follow (created beforehand, the many parents) ran once, after the rounds. ", o.fanoutRounds)
}
