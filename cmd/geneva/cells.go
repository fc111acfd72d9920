package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/worker"
)

// migrateCells are geneva migrate's flags for cells (docs/cells.md).
type migrateCells struct {
	cell, router bool
	partitions   int
	cells        []string
}

// envRoles are the roles' names of the environment: GENEVA_APP_ROLE, …
// (docs/security.md).
func envRoles() geneva.Roles {
	return geneva.Roles{
		App:      os.Getenv("GENEVA_APP_ROLE"),
		Operator: os.Getenv("GENEVA_OPERATOR_ROLE"),
		Worker:   os.Getenv("GENEVA_WORKER_ROLE"),
		Reader:   os.Getenv("GENEVA_READER_ROLE"),
	}
}

// migrateCells runs geneva migrate: a database, a cell or a router.
func (env *environment) migrateCells(ctx context.Context, cells migrateCells) error {
	switch {
	case cells.cell && cells.router:
		return usagef("--cell and --router exclude each other")
	case (cells.cell || cells.router) && cells.partitions == 0:
		return usagef("--cell and --router need --partitions P (a power of two)")
	case !cells.cell && !cells.router && cells.partitions != 0:
		return usagef("--partitions goes with --cell or --router")
	case cells.router != (len(cells.cells) > 0):
		return usagef("--router and --cells URL,URL,... go together")
	case cells.router:
		if err := geneva.MigrateRouter(ctx, env.pool, geneva.RouterOpts{
			Partitions: cells.partitions, Cells: cells.cells, Roles: envRoles(),
		}); err != nil {
			return err
		}
		env.printf("Router: %d partitions on %d cells; functions installed\n", cells.partitions, len(cells.cells))
		return nil
	}
	return env.migrate(ctx, cells.partitions)
}

// runCellWorkers runs geneva worker --cells: a worker (one River client) a
// cell, in this one process, until interrupted; then stops them all.
func runCellWorkers(c *cobra.Command, urls []string, newWorker func(*pgxpool.Pool) (*worker.Worker, error), describe func() string) (err error) {
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &environment{stdout: c.OutOrStdout()}
	var workers []*worker.Worker
	var pools []*pgxpool.Pool
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, w := range workers {
			err = errors.Join(err, w.Stop(stopCtx))
		}
		for _, pool := range pools {
			pool.Close()
		}
	}()
	for i, url := range urls {
		pool, err := connect(ctx, url, fmt.Sprintf("cell %d of --cells", i+1))
		if err != nil {
			return err
		}
		pools = append(pools, pool)
		w, err := newWorker(pool)
		if err != nil {
			return err
		}
		if err := w.Start(ctx); err != nil {
			return explain(err)
		}
		workers = append(workers, w)
	}
	env.printf("%s On %d cells. Stop with Ctrl-C.\n", describe(), len(urls))
	<-ctx.Done()
	env.printf("Stopping: finishing the requests in flight.\n")
	return nil
}
