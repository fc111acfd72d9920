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

func newMovePartitionCmd(opts *options) *cobra.Command {
	var (
		partition int
		from, to  string
	)
	cmd := &cobra.Command{
		Use:   "move-partition --partition N --from URL --to URL",
		Short: "Move a partition to another cell and change the router's map (cells)",
		Long: `Move one partition's workflows (with their executions, events, keys,
actions and pending River jobs) from the cell --from to the cell --to, both
cells of the router's partitions, and point the router's map (the database
of --database-url) at --to (docs/cells.md, "Moving a partition"). The
partition's calls fail while it moves. Refused while an execution of the
partition runs. Needs a superuser on both cells.`,
		Example: `  geneva --database-url postgres://geneva@db0/router move-partition --partition 3 \
    --from postgres://geneva@db1/cell1 --to postgres://geneva@db3/cell3`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			if from == "" || to == "" {
				return usagef("--from URL and --to URL name the cells")
			}
			fromPool, err := connect(ctx, from, "--from")
			if err != nil {
				return err
			}
			defer fromPool.Close()
			toPool, err := connect(ctx, to, "--to")
			if err != nil {
				return err
			}
			defer toPool.Close()
			if err := geneva.MovePartition(ctx, geneva.MoveOpts{
				Router: env.pool, From: fromPool, To: toPool, ToURL: to, Partition: partition,
			}); err != nil {
				return err
			}
			env.printf("Partition %d moved; the router's map points at the new cell.\n", partition)
			return nil
		}),
	}
	cmd.Flags().IntVar(&partition, "partition", -1, "the partition to move")
	cmd.Flags().StringVar(&from, "from", "", "the URL of the cell that holds it")
	cmd.Flags().StringVar(&to, "to", "", "the URL of the cell it moves to")
	return cmd
}
