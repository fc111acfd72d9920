package main

import (
	"context"
	"os"

	"github.com/geneva-dev/geneva"
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
