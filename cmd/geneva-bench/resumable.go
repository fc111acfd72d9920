package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// resumableResult is the cost of a resumable step's loop: a no-op step that
// calls Iteration.Set n times, with the default CheckpointInterval and with a
// write at every call.
type resumableResult struct {
	rows []resumableRow
}

type resumableRow struct {
	label      string
	iterations int
	elapsed    time.Duration
	roundTrips int64 // statements sent by the worker for the whole step
}

func (r resumableRow) perSecond() float64 { return float64(r.iterations) / r.elapsed.Seconds() }

func (r resumableRow) perThousand() float64 {
	return float64(r.roundTrips) * 1000 / float64(r.iterations)
}

// countingTracer counts the statements a connection sends.
type countingTracer struct{ n atomic.Int64 }

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// resumable runs a no-op resumable step in this process (worker.Runner, one
// connection) and counts its iterations per second and the statements it
// sends per 1,000 iterations.
func (b *bench) resumable(ctx context.Context) error {
	n := b.o.resumableIterations
	if n <= 0 {
		return nil
	}
	cases := []struct {
		label      string
		iterations int
		interval   time.Duration
	}{
		{"default CheckpointInterval (1 s)", n, 0},
		{"CheckpointInterval -1 (a write per Set)", max(n/50, 1000), -1},
	}
	for i, c := range cases {
		workflowType := fmt.Sprintf("BenchResumable%d", i)
		iterations := c.iterations
		wf := worker.NewWorkflow(workflowType, nil).
			ResumableStep("loop", func(ctx context.Context, it *worker.Iteration) error {
				var next int
				if _, err := it.Cursor(&next); err != nil {
					return err
				}
				for ; next < iterations; next++ {
					if err := it.Set(ctx, next+1); err != nil {
						return err
					}
				}
				return nil
			}, &worker.ResumableOpts{CheckpointInterval: c.interval})

		config, err := pgx.ParseConfig(b.o.databaseURL)
		if err != nil {
			return err
		}
		tracer := &countingTracer{}
		config.Tracer = tracer
		conn, err := pgx.ConnectConfig(ctx, config)
		if err != nil {
			return err
		}
		runner, err := worker.NewRunner(&worker.Config{Workflows: []*worker.Workflow{wf}})
		if err != nil {
			conn.Close(ctx)
			return err
		}
		if err := runner.Register(ctx, conn); err != nil {
			conn.Close(ctx)
			return err
		}
		client := goclient.New(b.pool)
		id, err := client.CreateWorkflow(ctx, workflowType, "Bench", fmt.Sprint(b.heroes.Add(1)), nil)
		if err != nil {
			conn.Close(ctx)
			return err
		}
		history, err := client.StepHistory(ctx, id)
		if err != nil {
			conn.Close(ctx)
			return err
		}

		tracer.n.Store(0)
		start := time.Now()
		err = runner.Perform(ctx, conn, history[0].ID)
		elapsed := time.Since(start)
		statements := tracer.n.Load()
		conn.Close(ctx)
		if err != nil {
			return err
		}
		workflow, err := client.GetWorkflow(ctx, id)
		if err != nil {
			return err
		}
		if workflow.State != goclient.StateFinished {
			return fmt.Errorf("the resumable bench workflow is %s, not finished", workflow.State)
		}
		b.r.resumable.rows = append(b.r.resumable.rows, resumableRow{
			label: c.label, iterations: iterations, elapsed: elapsed, roundTrips: statements,
		})
	}
	return nil
}

func (r resumableResult) markdown() string {
	if len(r.rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Resumable steps\n\n")
	b.WriteString("One no-op resumable step calling `Iteration.Set` in a loop, run by `worker.Runner` on one connection in the " +
		"benchmark's process; round trips count every statement the worker sent for the step (start_step, the cursor writes, complete_step).\n\n")
	b.WriteString("| cursor writes | iterations | iterations/s | round trips | round trips per 1,000 iterations |\n|---|---|---|---|---|\n")
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %s | %d | %.0f | %d | %.3g |\n", row.label, row.iterations, row.perSecond(), row.roundTrips, row.perThousand())
	}
	b.WriteString("\n")
	return b.String()
}
