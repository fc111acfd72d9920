// Command cellsteps measures steps a second through cells against one
// database (bench/cells/run.sh, `make bench-cells`; docs/cells.md): the
// same workflows (-workflows, of -steps no-op Go steps each) created on one
// database and run by one worker, then by as many workers as cells, then
// created through a router onto the cells and run by a worker a cell, all
// in this process, each side timed from its workers' start to its last
// workflow's end. It prints the rates and the ratios (cells ÷ one
// database).
//
//	go run ./internal/cmd/cellsteps -one URL -router URL -cells URL,URL
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva/worker"
)

func main() {
	one := flag.String("one", "", "URL of one database with Geneva installed (not a cell)")
	router := flag.String("router", "", "URL of the router onto the cells")
	cells := flag.String("cells", "", "the cells' URLs, comma-separated (a worker each)")
	workflows := flag.Int("workflows", 2000, "workflows created on each side")
	steps := flag.Int("steps", 5, "no-op steps a workflow")
	flag.Parse()
	if *one == "" || *router == "" || *cells == "" {
		log.Fatal("cellsteps: -one, -router and -cells are needed")
	}
	ctx := context.Background()
	cellURLs := strings.Split(*cells, ",")
	oneRate := run(ctx, *one, []string{*one}, *workflows, *steps)
	// as many workers (River clients) on the one database as there are
	// cells: the same concurrency, so the ratio is the routing's and the
	// cells', not the workers' count
	sameURLs := make([]string, len(cellURLs))
	for i := range sameURLs {
		sameURLs[i] = *one
	}
	sameRate := run(ctx, *one, sameURLs, *workflows, *steps)
	cellsRate := run(ctx, *router, cellURLs, *workflows, *steps)
	fmt.Printf("%d workflows of %d no-op steps a side, steps a second:\n", *workflows, *steps)
	fmt.Printf("  %-36s %8.0f\n", "one database, 1 worker", oneRate)
	fmt.Printf("  %-36s %8.0f\n", fmt.Sprintf("one database, %d workers", len(cellURLs)), sameRate)
	fmt.Printf("  %-36s %8.0f\n", fmt.Sprintf("%d cells via the router, a worker each", len(cellURLs)), cellsRate)
	fmt.Printf("cells ÷ one database: %.2f (same workers: %.2f)\n", cellsRate/oneRate, cellsRate/sameRate)
}

// run creates the workflows through front (a database, or a router onto
// the cells), then starts a worker on each of the worker URLs and returns
// the steps a second until every workflow has finished.
func run(ctx context.Context, front string, workerURLs []string, workflows, steps int) float64 {
	definition := worker.NewWorkflow("CellSteps", nil)
	for i := range steps {
		definition = definition.Step("s"+strconv.Itoa(i), func(ctx context.Context, step *worker.Step) error { return nil }, nil)
	}
	pools := make([]*pgxpool.Pool, len(workerURLs))
	for i, u := range workerURLs {
		pool, err := pgxpool.New(ctx, u)
		check(err)
		defer pool.Close()
		pools[i] = pool
		// a worker defines its types at start: start and stop one to define
		// the type in its database before the workflows are created
		w, err := worker.New(pool, &worker.Config{Workflows: []*worker.Workflow{definition}, Logger: slog.New(slog.DiscardHandler)})
		check(err)
		check(w.Start(ctx))
		check(w.Stop(ctx))
	}
	frontPool, err := pgxpool.New(ctx, front)
	check(err)
	defer frontPool.Close()
	heroes := make([]string, workflows)
	for i := range heroes {
		heroes[i] = "hero-" + strconv.Itoa(i)
	}
	finished := func() (n int) {
		check(frontPool.QueryRow(ctx,
			`select workflows from geneva.count_workflows('{"type": "CellSteps", "state": "finished"}')`).Scan(&n))
		return n
	}
	before := finished() // of an earlier run on the same database
	_, err = frontPool.Exec(ctx, "select geneva.create_workflows('CellSteps', 'User', $1)", heroes)
	check(err)

	started := time.Now()
	for _, pool := range pools {
		w, err := worker.New(pool, &worker.Config{Workflows: []*worker.Workflow{definition}, Logger: slog.New(slog.DiscardHandler)})
		check(err)
		check(w.Start(ctx))
		defer func() { _ = w.Stop(context.WithoutCancel(ctx)) }()
	}
	for finished() < before+workflows {
		time.Sleep(20 * time.Millisecond)
	}
	return float64(workflows*steps) / time.Since(started).Seconds()
}

func check(err error) {
	if err != nil {
		log.Fatal("cellsteps: ", err)
	}
}
