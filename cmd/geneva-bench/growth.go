package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/dashboard"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/promgeneva"
)

// growth fills history with finished workflows and, at each size, times the
// move of a slice of them, create_workflow, a short run of claims and ends
// through a worker, each dashboard view and read across history, the
// metrics scrape's query and the web dashboard's pages.
//
// The fill is setup, not measured, on a throwaway server with durability
// off: all but the last -growth-moved workflows of a size are written
// straight into the history partitions (historyFill.writeDirect: what the
// move would write, set-based), the last ones into the live tables, ended,
// then moved by housekeeping's own rounds with durability back on, and that
// move is timed (the growth rows' move column). With -growth-moved -1 every
// workflow goes through the live tables and the move, as before the straight
// write; with -growth-live none is moved (the tables as before history).
// Each part's time goes to standard error.
func (b *bench) growth(ctx context.Context) error {
	have := 0
	first := b.r.profiles[0]
	toggle := first.set && first.durable
	ref, err := b.growthReference(ctx)
	if err != nil {
		return err
	}
	if ref != nil {
		defer ref.pool.Close()
		defer ref.polls.Close()
	}
	// every size is read over the same partitions, a month of days (a
	// database past its first month; a fresh install has three, and plans
	// its reads over fewer): the rows differ by what history holds
	if err := historyPartitions(ctx, b.pool, time.Now()); err != nil {
		return err
	}
	for _, size := range slices.Sorted(slices.Values(b.o.growth)) {
		sizeStart := time.Now()
		row := growthRow{size: size}
		if size > have {
			logf("filling to %d finished workflows", size)
			if toggle {
				if err := b.setDurability(ctx, false); err != nil {
					return err
				}
			}
			fill, err := reserveHistoryFill(ctx, b.pool, int64(have+1), int64(size), time.Now())
			if err != nil {
				return err
			}
			live := size - have
			if !b.o.growthLive && b.o.growthMoved >= 0 {
				live = min(live, b.o.growthMoved)
			}
			if direct := size - live - have; direct > 0 {
				start := time.Now()
				err := fill.writeDirect(ctx, b.pool, int64(have+1), int64(have+direct), b.o.growthFillConns, func(done int64) {
					if done%1_000_000 == 0 || done == int64(direct) {
						took := time.Since(start)
						logf("  %d of %d written straight into history in %s (%.0f workflows/s)",
							done, direct, took.Round(time.Second), float64(done)/took.Seconds())
					}
				})
				if err != nil {
					return fmt.Errorf("writing history: %w", err)
				}
				row.direct, row.directTook = direct, time.Since(start)
				// what autovacuum would have done to history by now (hint
				// bits, the visibility map, statistics), as setup
				start = time.Now()
				if _, err := b.pool.Exec(ctx, "vacuum analyze geneva.workflows_history, geneva.step_executions_history, geneva.events_history"); err != nil {
					return err
				}
				logf("  vacuum analyze of history in %s", time.Since(start).Round(time.Millisecond))
			}
			start := time.Now()
			if err := fill.writeLive(ctx, b.pool, int64(size-live+1), int64(size)); err != nil {
				return fmt.Errorf("writing the live tables: %w", err)
			}
			logf("  %d written into the live tables, ended, in %s", live, time.Since(start).Round(time.Millisecond))
			if toggle {
				if err := b.setDurability(ctx, true); err != nil {
					return err
				}
			}
		}
		have = max(have, size)
		// housekeeping's rounds, as the workers run them every minute, move
		// what ended more than move_after ago into history (docs/history.md:
		// the live tables keep the last hour's) and fold the counts
		// (-growth-live: rounds that move nothing, as before history)
		start := time.Now()
		if b.o.growthLive {
			if _, err := b.pool.Exec(ctx, `select geneva.set_housekeeping_settings(p_move_after => interval '1000 years');
				select geneva.housekeep(p_keep_forever => true)`); err != nil {
				return err
			}
		} else {
			moved, err := moveToHistory(ctx, b.pool)
			if err != nil {
				return err
			}
			row.moved, row.moveTook = moved, time.Since(start)
			logf("  housekeeping moved %d ended workflows into history in %s", moved, row.moveTook.Round(time.Millisecond))
		}
		start = time.Now()
		vacuum := []string{"vacuum analyze geneva.workflows, geneva.step_executions, geneva.events, geneva.workflows_history, geneva.step_executions_history, geneva.events_history"}
		if row.direct > 0 {
			// history analyzed after the straight write: the moved slice
			// changes its statistics little, and another analyze would
			// sample every partition again
			vacuum = []string{"vacuum analyze geneva.workflows, geneva.step_executions, geneva.events",
				"vacuum geneva.workflows_history, geneva.step_executions_history, geneva.events_history"}
		}
		for _, sql := range vacuum {
			if _, err := b.pool.Exec(ctx, sql); err != nil {
				return err
			}
		}
		vacuumTook := time.Since(start)
		start = time.Now()
		if _, err := b.pool.Exec(ctx, "checkpoint"); err != nil {
			return err
		}
		if err := b.pool.QueryRow(ctx, "select pg_database_size(current_database())").Scan(&row.dbBytes); err != nil {
			return err
		}
		logf("  vacuum analyze in %s, checkpoint in %s; the database holds %.1f GB", vacuumTook.Round(time.Millisecond),
			time.Since(start).Round(time.Millisecond), float64(row.dbBytes)/1e9)

		// create_workflow, each call beside one on the empty database
		start = time.Now()
		var creates, refCreates []time.Duration
		for range b.o.growthCreates {
			for _, on := range []*bench{b, ref} {
				if on == nil {
					continue
				}
				start := time.Now()
				if _, err := goclient.New(on.pool).CreateWorkflow(ctx, "BenchCreate", "User", b.hero(), nil); err != nil {
					return err
				}
				if on == b {
					creates = append(creates, time.Since(start))
				} else {
					refCreates = append(refCreates, time.Since(start))
				}
			}
		}
		row.create = percentiles(creates)
		if len(refCreates) > 0 {
			row.refCreate = percentiles(refCreates)
		}
		logf("  %d create_workflow calls in %s", len(creates)+len(refCreates), time.Since(start).Round(time.Millisecond))
		// no worker here runs BenchCreate: canceled, and their River jobs
		// gone, so that the runs below do not snooze them again and again
		for _, on := range []*bench{b, ref} {
			if on == nil {
				continue
			}
			if _, err := on.pool.Exec(ctx, `select count(geneva.cancel_workflow(id)) from geneva.workflows where workflow_type = 'BenchCreate' and state = 'ready';
				delete from public.river_job where kind = 'geneva_step' and args ->> 'workflow_type' = 'BenchCreate'`); err != nil {
				return err
			}
		}

		// claims and ends: the headline's work, shorter, best of
		// -growth-runs; each run beside one on a database whose history is
		// empty, on the same server (the pair's order alternating), so that
		// the host's load, which drifts, weighs on both
		start = time.Now()
		var cpu, refCPU []float64
		for i := range b.o.growthRuns {
			for _, on := range [][2]*bench{{b, ref}, {ref, b}}[i%2] {
				if on == nil {
					continue
				}
				stats, err := on.genevaRunOf(ctx, b.o.growthWorkflows, b.o.workers, b.o.inlineSteps, 0, nil)
				if err != nil {
					return fmt.Errorf("claims and ends: %w", err)
				}
				perStep := 0.0
				if stats.serverCPU > 0 && stats.units > 0 {
					perStep = float64(stats.serverCPU) / float64(time.Microsecond) / float64(stats.units)
				}
				which := "growth"
				if on == b {
					row.steps = max(row.steps, stats.rate())
					cpu = append(cpu, perStep)
				} else {
					which = "empty"
					row.refSteps = max(row.refSteps, stats.rate())
					refCPU = append(refCPU, perStep)
				}
				logf("    run %d on the %s database: %.0f steps/s, %.0f µs of PostgreSQL CPU a step", i+1, which, stats.rate(), perStep)
			}
		}
		row.cpuPerStep, row.refCPUPerStep = median(cpu), median(refCPU)
		logf("  %d runs of %d workflows × %d steps in %s: best %.0f steps/s, median %.0f µs of PostgreSQL CPU a step (history empty, beside it: %.0f steps/s, %.0f µs)",
			b.o.growthRuns, b.o.growthWorkflows, b.o.steps, time.Since(start).Round(time.Millisecond),
			row.steps, row.cpuPerStep, row.refSteps, row.refCPUPerStep)

		start = time.Now()
		samples, err := growthSamples(ctx, b.pool)
		if err != nil {
			return err
		}
		for _, view := range []struct{ name, sql string }{
			{"workflow_counts", "select * from geneva.workflow_counts"},
			{"paused_workflows", "select * from geneva.paused_workflows"},
			{"stuck_executions", "select * from geneva.stuck_executions"},
			{"workflow_timeline", fmt.Sprintf("select * from geneva.workflow_timeline where workflow_id = %d", samples.workflow)},
			{"workflow_children", fmt.Sprintf("select * from geneva.workflow_children where parent_id = %d", samples.parent)},
			{"step_errors", fmt.Sprintf("select * from geneva.step_errors where workflow_id = %d", samples.canceled)},
			{"workflow_list", "select * from geneva.workflow_list order by workflow_id desc limit 50"},
			{"list_workflows", "select * from geneva.list_workflows('{}', 50)"},
			{"count_workflows", "select geneva.count_workflows('{}')"},
			{"step_stats", "select * from geneva.step_stats"},
			{"event_stats", "select * from geneva.event_stats"},
			{"engine_metrics", "select * from geneva.engine_metrics"},
			{"scrape", promgeneva.Query}, // each Prometheus scrape's one query (promgeneva)
		} {
			took, err := bestOf(func() error {
				rows, err := b.pool.Query(ctx, view.sql)
				if err != nil {
					return err
				}
				for rows.Next() {
				}
				rows.Close()
				return rows.Err()
			})
			if err != nil {
				return fmt.Errorf("%s: %w", view.name, err)
			}
			row.views = append(row.views, viewTime{name: view.name, took: took})
		}
		pages, err := dashboardPages(ctx, b.pool, samples.workflow)
		if err != nil {
			return err
		}
		row.views = append(row.views, pages...)
		logf("  views and pages in %s", time.Since(start).Round(time.Millisecond))
		b.r.growth = append(b.r.growth, row)
		for _, v := range row.views {
			logf("  %s: %.1f ms", v.name, float64(v.took)/float64(time.Millisecond))
		}
		logf("  create_workflow p50 %.2f ms, p99 %.2f ms (history empty, beside it: %.2f, %.2f)", row.create.p50, row.create.p99, row.refCreate.p50, row.refCreate.p99)
		logf("size %d done in %s", size, time.Since(sizeStart).Round(time.Second))
	}
	return nil
}

// median is the middle of values (the mean of the two middle ones), 0 for
// none. The PostgreSQL CPU a step of a run is read from the server's process
// tree, which a backend of other work leaving during the run can throw off
// (once at 10,000,000: 22 µs): the median leaves such a run out.
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	v := slices.Sorted(slices.Values(values))
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// growthReference returns a bench on another database of the throwaway
// server, migrated and with the benchmark's types, whose history stays
// empty: the claims and ends run on it beside each growth size's. Nil on a
// server given by URL (the growth rows then compare with their first size
// alone).
func (b *bench) growthReference(ctx context.Context) (*bench, error) {
	if b.samplerURL == "" || b.o.growthWorkflows <= 0 {
		return nil, nil
	}
	if _, err := b.pool.Exec(ctx, "drop database if exists bench_empty"); err != nil {
		return nil, err
	}
	if _, err := b.pool.Exec(ctx, "create database bench_empty"); err != nil {
		return nil, err
	}
	config := b.pool.Config().Copy()
	config.ConnConfig.Database = "bench_empty"
	ref := &bench{o: b.o, samplerURL: b.samplerURL}
	u, err := url.Parse(b.o.databaseURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/bench_empty"
	ref.o.databaseURL = u.String()
	if ref.pool, err = pgxpool.NewWithConfig(ctx, config); err != nil {
		return nil, err
	}
	pollsConfig := b.polls.Config().Copy()
	pollsConfig.ConnConfig.Database = "bench_empty"
	if ref.polls, err = pgxpool.NewWithConfig(ctx, pollsConfig); err != nil {
		ref.pool.Close()
		return nil, err
	}
	if _, err := geneva.Migrate(ctx, ref.pool, nil); err != nil {
		return nil, err
	}
	return ref, ref.define(ctx)
}

// bestOf runs read three times and returns its best time; a read that took
// more than 10 s once is not run again.
func bestOf(read func() error) (time.Duration, error) {
	best := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		if err := read(); err != nil {
			return 0, err
		}
		took := time.Since(start)
		best = min(best, took)
		if took > 10*time.Second {
			break
		}
	}
	return best, nil
}

// growthReads are the workflows the growth rows read one of: the newest
// BenchHistory workflow, the newest parent and the newest workflow canceled
// by an error, moved or not (0: none yet).
type growthReads struct{ workflow, parent, canceled int64 }

func growthSamples(ctx context.Context, pool *pgxpool.Pool) (growthReads, error) {
	var s growthReads
	err := pool.QueryRow(ctx, `
		select coalesce(greatest((select max(id) from geneva.workflows where workflow_type = $1),
		    (select max(id) from geneva.workflows_history where workflow_type = $1)), 0),
		  coalesce(greatest((select max(id) from geneva.workflows where workflow_type = $2),
		    (select max(id) from geneva.workflows_history where workflow_type = $2)), 0),
		  coalesce(greatest((select max(id) from geneva.workflows where workflow_type = $1 and state = 'canceled'),
		    (select max(id) from geneva.workflows_history where workflow_type = $1 and state = 'canceled')), 0)`,
		"BenchHistory", "BenchHistoryBatch").Scan(&s.workflow, &s.parent, &s.canceled)
	return s, err
}

// dashboardPages times the dashboard's pages (best of 3), served in process.
func dashboardPages(ctx context.Context, pool *pgxpool.Pool, sample int64) ([]viewTime, error) {
	handler, err := dashboard.New(pool, nil)
	if err != nil {
		return nil, err
	}
	if sample == 0 { // no history yet: the newest workflow
		if err := pool.QueryRow(ctx, "select coalesce(max(id), 0) from geneva.workflows").Scan(&sample); err != nil {
			return nil, err
		}
	}
	var times []viewTime
	for _, page := range []struct{ name, path string }{
		{"page /", "/"},
		{"page /workflows", "/workflows?type=BenchHistory"},
		{"page /workflows/ID", fmt.Sprintf("/workflows/%d", sample)},
		{"page /paused", "/paused"},
		{"page /stats", "/stats"},
	} {
		took, err := bestOf(func() error {
			req := httptest.NewRequestWithContext(ctx, http.MethodGet, page.path, nil)
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				return fmt.Errorf("dashboard %s: %d %s", page.path, rec.Code, rec.Body.String())
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		times = append(times, viewTime{name: page.name, took: took})
	}
	return times, nil
}
