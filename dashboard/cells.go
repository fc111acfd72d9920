package dashboard

import (
	"context"
)

// A dashboard started with a cells' router's URL (docs/cells.md) reads
// every cell through it: the router has the cells' views, merged, those whose
// rows are each one cell's with a last column, cell. The pages the
// dashboard's own queries make show that cell (the queue lags, each cell's
// counts on the overview).

// onRouter says whether the dashboard reads a cells' router
// (goclient's OnRouter, cached).
func (h *handler) onRouter(ctx context.Context) bool {
	return h.client.OnRouter(ctx)
}

// cellCounts is a cell's ongoing and ended workflows, by state.
type cellCounts struct {
	Cell   string
	Counts map[string]int64
}

// cellsCounts reads each cell's workflows by state
// (geneva.cells_workflow_counts), by cell name.
func (h *handler) cellsCounts(ctx context.Context) ([]*cellCounts, error) {
	rows, err := h.db.Query(ctx, `select cell, state, sum(workflows)::bigint
		from geneva.cells_workflow_counts() group by cell, state order by cell, state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []*cellCounts
	for rows.Next() {
		var cell, state string
		var n int64
		if err := rows.Scan(&cell, &state, &n); err != nil {
			return nil, err
		}
		if len(list) == 0 || list[len(list)-1].Cell != cell {
			list = append(list, &cellCounts{Cell: cell, Counts: map[string]int64{}})
		}
		list[len(list)-1].Counts[state] = n
	}
	return list, rows.Err()
}
