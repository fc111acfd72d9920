package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

type bench struct {
	o    options
	pool *pgxpool.Pool
	// polls is the connections of the measurement's own polls and
	// readings, whose backends' CPU is left out of PostgreSQL's
	// (runStats.ownCPU); the runs' work (the workflows' creation, say) goes
	// through pool
	polls *pgxpool.Pool
	r     results
	// samplerURL is a database of the same server other than the runs'
	// (empty: the runs' own).
	samplerURL string
	// heroes numbers heroes across runs, so that every workflow has its own.
	heroes atomic.Int64
	// ownPolls counts the benchmark's own statements on the runs' database,
	// which a run's commits leave out.
	ownPolls atomic.Int64
	// postmasterPID is the server's postmaster when it runs on this machine.
	postmasterPID int
}

// childConfig is a child worker's configuration with the given slots and
// InlineSteps, slots+6 connections (or -pool) and the benchmark's settings.
func (b *bench) childConfig(mode string, slots, inlineSteps int) childConfig {
	pool := b.o.pool
	if pool <= 0 {
		pool = slots + 6
	}
	return childConfig{
		mode: mode, databaseURL: b.o.databaseURL, maxWorkers: slots, poolSize: pool,
		steps: b.o.steps, fetchCooldown: b.o.fetchCooldown, inlineSteps: inlineSteps,
	}
}

func (b *bench) hero() string { return fmt.Sprint(b.heroes.Add(1)) }

// define registers the benchmark's workflow types: Bench (the no-op steps),
// BenchAwait (one step awaiting an event), the limit runs' (limitWorkflows),
// the fan-out runs' (fanoutWorkflows)
// and BenchCreate (one step, for create_workflow).
func (b *bench) define(ctx context.Context) error {
	client := protocol.New(b.pool)
	definition, err := benchWorkflow(b.o.steps).Definition()
	if err != nil {
		return err
	}
	if err := client.DefineWorkflow(ctx, "Bench", definition); err != nil {
		return err
	}
	if definition, err = benchAwaitWorkflow().Definition(); err != nil {
		return err
	}
	if err := client.DefineWorkflow(ctx, "BenchAwait", definition); err != nil {
		return err
	}
	for _, wf := range append(limitWorkflows(b.o.steps), fanoutWorkflows()...) {
		if definition, err = wf.Definition(); err != nil {
			return err
		}
		if err := client.DefineWorkflow(ctx, wf.Type(), definition); err != nil {
			return err
		}
	}
	return client.DefineWorkflow(ctx, "BenchCreate", []byte(`{"steps": [{"name": "only"}]}`))
}

// createBatch creates n workflows of the type in transactions of up to 100 and
// returns the range of their ids. With group, the i-th (from 0) is in the
// group group(i).
func (b *bench) createBatch(ctx context.Context, workflowType string, n int, group func(int) string) (first, last int64, err error) {
	for done := 0; done < n; {
		size := min(100, n-done)
		heroes := make([]string, size)
		var opts *goclient.CreateWorkflowsOpts
		if group != nil {
			opts = &goclient.CreateWorkflowsOpts{Groups: make([]string, size)}
		}
		for i := range heroes {
			heroes[i] = b.hero()
			if group != nil {
				opts.Groups[i] = group(done + i)
			}
		}
		ids, err := b.create(ctx, workflowType, heroes, opts)
		if err != nil {
			return 0, 0, err
		}
		if first == 0 {
			first = ids[0]
		}
		last = ids[len(ids)-1]
		done += size
	}
	return first, last, nil
}

// create creates the workflows in one transaction: with create_workflows,
// or one create_workflow call at a time with -create-one-by-one.
func (b *bench) create(ctx context.Context, workflowType string, heroes []string, opts *goclient.CreateWorkflowsOpts) ([]int64, error) {
	if !b.o.createOneByOne {
		return goclient.New(b.pool).CreateWorkflows(ctx, workflowType, "User", heroes, opts)
	}
	ids := make([]int64, len(heroes))
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		for i, hero := range heroes {
			var one *goclient.CreateWorkflowOpts
			if opts != nil {
				one = &goclient.CreateWorkflowOpts{Group: opts.Groups[i]}
			}
			var err error
			if ids[i], err = goclient.New(tx).CreateWorkflow(ctx, workflowType, "User", hero, one); err != nil {
				return err
			}
		}
		return nil
	})
	return ids, err
}

// waitFinished waits until no workflow of the type is ready or performing.
// Its poll, every 50 ms while the measured work runs on the same cores,
// reads only the type's ongoing workflows (the index workflows_ongoing_type,
// whose predicate it repeats): one that read every workflow of the type
// took 8 ms at 30,000 ended ones, a sixth of a core, more as a run's rounds
// added rows (bench/NOTES.md).
func (b *bench) waitFinished(ctx context.Context, workflowType string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var active int
		err := b.polls.QueryRow(ctx, `select count(*) from geneva.workflows
			where workflow_type = $1 and finished_at is null and canceled_at is null
			  and state in ('ready', 'performing')`, workflowType).Scan(&active)
		if err != nil {
			return err
		}
		b.ownPolls.Add(1)
		if active == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d %s workflows still run after %s", active, workflowType, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// setDurability switches the throwaway server's durability settings.
func (b *bench) setDurability(ctx context.Context, durable bool) error {
	return setDurability(ctx, b.pool, durable)
}

// throughput measures one durability: River's ceiling, then at each number
// of slots Geneva (with inline steps, and with every step through its own
// River job) and raw River with the same slots.
func (b *bench) throughput(ctx context.Context, p *profileResults) error {
	if p.set {
		if err := b.setDurability(ctx, p.durable); err != nil {
			return err
		}
	}
	if b.o.ceilingJobs > 0 {
		var err error
		if p.ceiling, err = b.riverCeiling(ctx); err != nil {
			return fmt.Errorf("the ceiling of raw River: %w", err)
		}
		fmt.Fprintf(os.Stderr, "geneva-bench: %s: River's ceiling %.0f jobs/s (%d workers)\n", p.name, p.ceiling.rate(), b.o.ceilingWorkers)
	}
	if b.o.warmup > 0 {
		if _, err := b.genevaRunOf(ctx, b.o.warmup, b.o.workers, b.o.inlineSteps, 0, nil); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	for _, slots := range b.o.sweep {
		row := sweepRow{slots: slots}
		main := slots == b.o.workers
		var err error
		if main && b.o.profile {
			if _, err := b.pool.Exec(ctx, "create extension if not exists pg_stat_statements; select pg_stat_statements_reset()"); err != nil {
				return err
			}
		}
		var lat *latencyPair
		if main {
			lat = &p.fullLoad
		}
		if row.geneva, err = b.genevaRun(ctx, slots, b.o.inlineSteps, lat); err != nil {
			return err
		}
		if main && b.o.profile {
			if err := b.printProfile(ctx); err != nil {
				return err
			}
		}
		if b.o.ownJobs {
			if row.ownJobs, err = b.genevaRun(ctx, slots, -1, nil); err != nil {
				return err
			}
		}
		if b.o.unbatched {
			if row.unbatched, err = b.genevaRunBatch(ctx, slots, b.o.inlineSteps, 1, nil); err != nil {
				return err
			}
			if b.o.ownJobs && b.o.unbatchedOwnJobs {
				if row.unbatchedOwnJobs, err = b.genevaRunBatch(ctx, slots, -1, 1, nil); err != nil {
					return err
				}
			}
		}
		if b.o.riverSlots {
			if row.river, err = b.riverRun(ctx, slots); err != nil {
				return err
			}
		}
		fmt.Fprintf(os.Stderr, "geneva-bench: %s: %d slots: Geneva %.0f steps/s (%.2f commits, %.0f WAL bytes per step; waits: %s); each step its own job %.0f; unbatched %.0f and %.0f; River %.0f jobs/s\n",
			p.name, slots, row.geneva.rate(), row.geneva.commitsPerUnit(), row.geneva.walPerUnit(), row.geneva.topWaits(),
			row.ownJobs.rate(), row.unbatched.rate(), row.unbatchedOwnJobs.rate(), row.river.rate())
		p.sweep = append(p.sweep, row)
	}
	if b.o.genevaCeiling && len(b.o.sweep) > 0 {
		slots := slices.Max(b.o.sweep)
		var err error
		if p.genevaCeiling, err = b.genevaCeilingRun(ctx, slots, b.o.inlineSteps); err != nil {
			return fmt.Errorf("measured as River's ceiling is: %w", err)
		}
		if b.o.ownJobs {
			if p.genevaCeilingOwnJobs, err = b.genevaCeilingRun(ctx, slots, -1); err != nil {
				return fmt.Errorf("measured as River's ceiling is, each step its own job: %w", err)
			}
		}
		fmt.Fprintf(os.Stderr, "geneva-bench: %s: Geneva measured as River's ceiling is, %d slots: %.0f steps/s; each step its own job %.0f\n",
			p.name, slots, p.genevaCeiling.rate(), p.genevaCeilingOwnJobs.rate())
	}
	if err := b.awaitSteady(ctx, p); err != nil {
		return fmt.Errorf("awaited steps at a steady load: %w", err)
	}
	if err := b.awaitBurst(ctx, p); err != nil {
		return fmt.Errorf("%d events at once: %w", b.o.awaitBurst, err)
	}
	if err := b.limitRuns(ctx, p); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	if err := b.fairness(ctx, p); err != nil {
		return fmt.Errorf("fairness: %w", err)
	}
	if err := b.httpRuns(ctx, p); err != nil {
		return fmt.Errorf("HTTP steps: %w", err)
	}
	if err := b.fanoutRuns(ctx, p); err != nil {
		return fmt.Errorf("fan-out: %w", err)
	}
	if err := b.keyedSends(ctx, p); err != nil {
		return fmt.Errorf("keyed sends: %w", err)
	}
	return nil
}

// genevaRun creates the workflows of a throughput run at once and waits until
// a worker with the given slots and InlineSteps has finished them; with lat,
// it also reads their latencies.
func (b *bench) genevaRun(ctx context.Context, slots, inlineSteps int, lat *latencyPair) (runStats, error) {
	return b.genevaRunBatch(ctx, slots, inlineSteps, 0, lat)
}

// genevaRunBatch is genevaRun with the worker's completer batch size forced
// to completeBatch (0: the worker's default).
func (b *bench) genevaRunBatch(ctx context.Context, slots, inlineSteps, completeBatch int, lat *latencyPair) (runStats, error) {
	return b.genevaRunOf(ctx, b.o.workflows, slots, inlineSteps, completeBatch, lat)
}

// genevaRunOf is genevaRunBatch with its own number of workflows.
func (b *bench) genevaRunOf(ctx context.Context, workflows, slots, inlineSteps, completeBatch int, lat *latencyPair) (runStats, error) {
	config := b.childConfig("geneva", slots, inlineSteps)
	config.completeBatch = completeBatch
	stats, first, last, err := b.runWorkflows(ctx, config, "Bench", workflows, nil)
	if err == nil && lat != nil {
		*lat, err = b.latencies(ctx, first, last)
	}
	return stats, err
}

// runWorkflows creates n workflows of the type (of -steps steps each; with
// group, in their groups: createBatch) while a worker of the configuration
// runs, waits until they are finished, and returns the run's measurement
// and the range of the workflows' ids.
func (b *bench) runWorkflows(ctx context.Context, config childConfig, workflowType string, n int, group func(int) string) (stats runStats, first, last int64, err error) {
	stats, err = b.measure(ctx, config, func(ctx context.Context) (int, time.Duration, error) {
		start := time.Now()
		var err error
		first, last, err = b.createBatch(ctx, workflowType, n, group)
		if err == nil {
			err = b.waitFinished(ctx, workflowType, 10*time.Minute)
		}
		return n * b.o.steps, time.Since(start), err
	})
	return stats, first, last, err
}

// riverRun works as many no-op River jobs as a Geneva run has steps, with
// the same slots and settings, inserted while the worker runs.
func (b *bench) riverRun(ctx context.Context, slots int) (runStats, error) {
	return b.measure(ctx, b.childConfig("river", slots, 0), func(ctx context.Context) (int, time.Duration, error) {
		jobs := b.o.workflows * b.o.steps
		start := time.Now()
		if err := b.insertRiverJobs(ctx, jobs); err != nil {
			return 0, 0, err
		}
		err := b.waitRiverJobs(ctx)
		return jobs, time.Since(start), err
	})
}

// riverCeiling measures River at its best, as River's own benchmark does:
// every job inserted in bulk beforehand, then one client with hundreds of
// workers, a 2 ms fetch cooldown and a 20 ms fetch poll interval, completing
// jobs through River's batching completer (its client's only completer). The
// time is the database's, from the first job's start to the last one's end,
// so the worker's start-up is not counted.
func (b *bench) riverCeiling(ctx context.Context) (runStats, error) {
	if err := b.settle(ctx); err != nil {
		return runStats{}, err
	}
	if err := b.insertRiverJobs(ctx, b.o.ceilingJobs); err != nil {
		return runStats{}, err
	}
	config := childConfig{
		mode: "river", databaseURL: b.o.databaseURL, maxWorkers: b.o.ceilingWorkers, poolSize: b.o.ceilingPool,
		steps: b.o.steps, fetchCooldown: 2 * time.Millisecond, fetchPollInterval: 20 * time.Millisecond,
	}
	return b.measure(ctx, config, func(ctx context.Context) (int, time.Duration, error) {
		if err := b.waitRiverJobs(ctx); err != nil {
			return 0, 0, err
		}
		var seconds float64
		err := b.pool.QueryRow(ctx, `select extract(epoch from max(finalized_at) - min(attempted_at))::float8
			from public.river_job where kind = 'bench_noop'`).Scan(&seconds)
		b.ownPolls.Add(1)
		return b.o.ceilingJobs, time.Duration(seconds * float64(time.Second)), err
	})
}

// genevaCeilingRun measures Geneva as riverCeiling measures River: the
// throughput run's workflows created beforehand (100 a call, before
// the run's counters are read, so that neither their time nor their CPU or WAL
// is counted), then a worker with the given slots and InlineSteps; the time is
// the database's, from the first step's start to the last one's end.
func (b *bench) genevaCeilingRun(ctx context.Context, slots, inlineSteps int) (runStats, error) {
	if err := b.settle(ctx); err != nil {
		return runStats{}, err
	}
	first, last, err := b.createBatch(ctx, "Bench", b.o.workflows, nil)
	if err != nil {
		return runStats{}, err
	}
	return b.measure(ctx, b.childConfig("geneva", slots, inlineSteps), func(ctx context.Context) (int, time.Duration, error) {
		if err := b.waitFinished(ctx, "Bench", 10*time.Minute); err != nil {
			return 0, 0, err
		}
		var (
			seconds float64
			steps   int
		)
		err := b.pool.QueryRow(ctx, `select extract(epoch from max(finished_at) - min(started_at))::float8, count(*)::int
			from geneva.step_executions where workflow_id between $1 and $2 and state = 'completed'`, first, last).Scan(&seconds, &steps)
		b.ownPolls.Add(1)
		return steps, time.Duration(seconds * float64(time.Second)), err
	})
}

// insertRiverJobs inserts no-op River jobs in bulk, 5,000 a statement.
func (b *bench) insertRiverJobs(ctx context.Context, jobs int) error {
	inserter, err := river.NewClient(riverpgxv5.New(b.pool), &river.Config{})
	if err != nil {
		return err
	}
	for done := 0; done < jobs; {
		size := min(5000, jobs-done)
		params := make([]river.InsertManyParams, size)
		for i := range params {
			params[i] = river.InsertManyParams{Args: noopArgs{}}
		}
		if _, err := inserter.InsertManyFast(ctx, params); err != nil {
			return err
		}
		done += size
	}
	return nil
}

// waitRiverJobs waits until every no-op River job has been worked.
func (b *bench) waitRiverJobs(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var left int
		err := b.polls.QueryRow(ctx, `select count(*) from public.river_job
			where kind = 'bench_noop' and state in ('available', 'running', 'retryable', 'scheduled', 'pending')`).Scan(&left)
		if err != nil {
			return err
		}
		b.ownPolls.Add(1)
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d River jobs left after 10 minutes", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// steadyLoad offers steps at a steady rate well below saturation, each
// workflow created in its own transaction, and measures the latencies.
func (b *bench) steadyLoad(ctx context.Context) error {
	worker, err := startChild(b.childConfig("geneva", b.o.workers, b.o.inlineSteps))
	if err != nil {
		return err
	}
	client := goclient.New(b.pool)
	perSecond := float64(b.o.steadyRate) / float64(b.o.steps)
	// Each create waits for its own commit (a WAL flush on a durable
	// server), so the load is offered from up to eight connections at once:
	// one alone falls behind the rate when flushes are slow.
	var (
		first, last int64
		owed        float64
		tick        = 10 * time.Millisecond
		ticker      = time.NewTicker(tick)
		end         = time.Now().Add(b.o.steadyFor)
		created     int
		mu          sync.Mutex
		createErr   error
		inFlight    = make(chan struct{}, 8)
		wg          sync.WaitGroup
	)
	create := func() {
		defer wg.Done()
		defer func() { <-inFlight }()
		id, err := client.CreateWorkflow(ctx, "Bench", "User", b.hero(), nil)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			createErr = err
			return
		}
		if first == 0 || id < first {
			first = id
		}
		last = max(last, id)
		created++
	}
	for now := range ticker.C {
		if now.After(end) {
			break
		}
		owed += perSecond * tick.Seconds()
		for ; owed >= 1; owed-- {
			inFlight <- struct{}{}
			wg.Add(1)
			go create()
		}
	}
	wg.Wait()
	if createErr != nil {
		return createErr
	}
	ticker.Stop()
	if err := b.waitFinished(ctx, "Bench", 5*time.Minute); err != nil {
		return err
	}
	if _, _, err := worker.stop(); err != nil {
		return err
	}
	b.r.steadyOffered = b.o.steadyRate
	b.r.steadyAchieved = float64(created*b.o.steps) / b.o.steadyFor.Seconds()
	b.r.steady, err = b.latencies(ctx, first, last)
	return err
}

// createThroughput creates workflows with several connections at once, first
// one per transaction, then a hundred per transaction.
func (b *bench) createThroughput(ctx context.Context) error {
	if b.o.creates <= 0 || b.o.createConns <= 0 {
		return nil
	}
	run := func(perTx int, many bool) (float64, error) {
		var (
			wg       sync.WaitGroup
			errs     = make(chan error, b.o.createConns)
			perConn  = b.o.creates / b.o.createConns
			start    = time.Now()
			creating = func() error {
				for done := 0; done < perConn; done += perTx {
					if many {
						heroes := make([]string, perTx)
						for i := range heroes {
							heroes[i] = b.hero()
						}
						if _, err := goclient.New(b.pool).CreateWorkflows(ctx, "BenchCreate", "User", heroes, nil); err != nil {
							return err
						}
						continue
					}
					err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
						client := goclient.New(tx)
						for range perTx {
							if _, err := client.CreateWorkflow(ctx, "BenchCreate", "User", b.hero(), nil); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						return err
					}
				}
				return nil
			}
		)
		for range b.o.createConns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- creating()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return 0, err
			}
		}
		return float64(perConn*b.o.createConns) / time.Since(start).Seconds(), nil
	}
	var err error
	if b.r.createsOnePerTx, err = run(1, false); err != nil {
		return err
	}
	if b.r.createsHundredPerTx, err = run(100, false); err != nil {
		return err
	}
	b.r.createsHundredACall, err = run(100, true)
	return err
}

// moveToHistory runs housekeeping's rounds (history's move, no retention)
// until they move nothing more, in rounds of 10,000 trees (the setting's
// batch of 1,000 would take a thousand rounds to a million), and returns
// how many workflows they moved.
func moveToHistory(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	total := 0
	for {
		var moved int
		err := pool.QueryRow(ctx, `select (r ->> 'workflows_moved')::int
			from geneva.housekeep(p_keep_forever => true, p_batch_size => 10000) r`).Scan(&moved)
		if err != nil {
			return total, err
		}
		total += moved
		if moved == 0 {
			return total, nil
		}
	}
}

// latency is a distribution in milliseconds.
type latency struct {
	p50, p95, p99, max float64
	n                  int
}

// latencies reads, for the executions of workflows first..last, the lag from
// scheduled_for to started_at, the same lag of only the steps started by
// their own River job (a step the worker ran inline started in the
// transaction that completed the step before it, so its lag is zero), and the
// gap from a step's end to the next step's start.
func (b *bench) latencies(ctx context.Context, first, last int64) (latencyPair, error) {
	var pair latencyPair
	err := b.pool.QueryRow(ctx, `
		with e as (
		  select extract(epoch from started_at - scheduled_for) * 1000 as lag,
		    case when job_id is not null then extract(epoch from started_at - scheduled_for) * 1000 end as job_lag,
		    extract(epoch from started_at - lag(finished_at) over (partition by workflow_id order by id)) * 1000 as gap
		  from geneva.step_executions
		  where workflow_id between $1 and $2 and started_at is not null
		)
		select
		  percentile_cont(0.5) within group (order by lag), percentile_cont(0.95) within group (order by lag),
		  percentile_cont(0.99) within group (order by lag), max(lag), count(lag),
		  coalesce(percentile_cont(0.5) within group (order by job_lag), 0), coalesce(percentile_cont(0.95) within group (order by job_lag), 0),
		  coalesce(percentile_cont(0.99) within group (order by job_lag), 0), coalesce(max(job_lag), 0), count(job_lag),
		  coalesce(percentile_cont(0.5) within group (order by gap), 0), coalesce(percentile_cont(0.95) within group (order by gap), 0),
		  coalesce(percentile_cont(0.99) within group (order by gap), 0), coalesce(max(gap), 0), count(gap)
		from e`, first, last).Scan(
		&pair.lag.p50, &pair.lag.p95, &pair.lag.p99, &pair.lag.max, &pair.lag.n,
		&pair.jobLag.p50, &pair.jobLag.p95, &pair.jobLag.p99, &pair.jobLag.max, &pair.jobLag.n,
		&pair.gap.p50, &pair.gap.p95, &pair.gap.p99, &pair.gap.max, &pair.gap.n)
	return pair, err
}

type latencyPair struct{ lag, jobLag, gap latency }

func percentiles(durations []time.Duration) latency {
	slices.Sort(durations)
	at := func(q float64) float64 {
		return float64(durations[int(q*float64(len(durations)-1))]) / float64(time.Millisecond)
	}
	return latency{p50: at(0.5), p95: at(0.95), p99: at(0.99), max: at(1), n: len(durations)}
}

// printProfile prints the statements that took the most time, from
// pg_stat_statements.
func (b *bench) printProfile(ctx context.Context) error {
	rows, err := b.pool.Query(ctx, `select calls, round(total_exec_time::numeric, 1), round(mean_exec_time::numeric, 3),
		left(regexp_replace(query, '\s+', ' ', 'g'), 110)
		from pg_stat_statements order by total_exec_time desc limit 25`)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintf(os.Stderr, "%8s %10s %8s  %s\n", "calls", "total ms", "mean ms", "query")
	for rows.Next() {
		var (
			calls       int64
			total, mean float64
			query       string
		)
		if err := rows.Scan(&calls, &total, &mean, &query); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%8d %10.1f %8.3f  %s\n", calls, total, mean, query)
	}
	return rows.Err()
}
