package goclient

import "context"

// OnRouter says whether the client's database is a cells' router
// (docs/cells.md: it has geneva.cells_workflow_counts()). The answer is
// cached; an error reads as no and is asked again next time.
//
// Through a router, the views are every cell's, merged, each row with the
// cell it comes from (the Cell fields); the client reads one workflow's rows
// of a view (Timeline, ChildCounts, Retries, and ActionLog, AwaitingEvents
// and WorkflowBlockers given a WorkflowID) from the one cell its id routes
// to (the router's geneva.cell_<view>(id)), not from every cell's whole view.
func (c *Client) OnRouter(ctx context.Context) bool {
	switch c.router.Load() {
	case 1:
		return false
	case 2:
		return true
	}
	var router bool
	if err := c.db.QueryRow(ctx, `select pg_catalog.to_regprocedure('geneva.cells_workflow_counts()') is not null`).Scan(&router); err != nil {
		return false
	}
	if router {
		c.router.Store(2)
	} else {
		c.router.Store(1)
	}
	return router
}

// oneWorkflow is what a read of view filtered by one workflow's id (the
// query's parameter ref, e.g. "$1") reads from: the view, or through a
// router the cell's rows the id routes to (geneva.cell_<view>), which the
// query's own filter keeps as they are.
func (c *Client) oneWorkflow(ctx context.Context, view, ref string) string {
	if c.OnRouter(ctx) {
		return "geneva.cell_" + view + "(" + ref + "::bigint)"
	}
	return "geneva." + view
}
