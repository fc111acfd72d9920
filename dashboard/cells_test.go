package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/promgeneva"
)

// TestCellsPages: a dashboard started with a cells' router's URL renders
// every page from both cells (docs/cells.md): the overview adds each cell's
// counts and a cell column to the queue lags, the lists merge the cells'
// rows, and the metrics read through the router.
func TestCellsPages(t *testing.T) {
	t.Parallel()
	const partitions = 4
	cellURLs, router := dbtest.Cells(t, 2, partitions)
	ctx := context.Background()
	cells := make([]*pgxpool.Pool, len(cellURLs))
	for i, u := range cellURLs {
		var err error
		cells[i], err = pgxpool.New(ctx, u)
		require.NoError(t, err)
		t.Cleanup(cells[i].Close)
	}
	w := &world{ctx: ctx, pool: router, cellOf: func(id int64) *pgxpool.Pool { return cells[(id&(partitions-1))%2] }}
	fillWorld(t, w)
	w.exec(t, "select geneva.define_limit('api', 5)")
	w.exec(t, "select geneva.create_schedule('digest', '* * * * *', 'Onboarding', 'Team', 'ops')")
	w.exec(t, "select geneva.pause_workflow($1)", w.ready[0])
	names := make([]string, len(cells))
	for i, cell := range cells {
		require.NoError(t, cell.QueryRow(ctx, "select current_database()").Scan(&names[i]))
	}
	inCells := map[int]bool{}
	for _, id := range append(append(append(append([]int64{w.canceled}, w.gatewayTimeout...), w.cardDeclined...), w.finished...), w.ready...) {
		inCells[int(id&(partitions-1))%2] = true
	}
	require.Len(t, inCells, 2, "the workflows live in both cells")

	h := w.newHandler(t, &Config{Metrics: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rows, err := router.Query(r.Context(), promgeneva.Query)
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
		}
	})})
	pages := []string{
		"/", "/workflows", "/workflows?state=paused", "/workflows?type=Payment&error_class=GatewayTimeout",
		fmt.Sprintf("/workflows/%d", w.gatewayTimeout[0]), fmt.Sprintf("/workflows/%d", w.finished[0]),
		fmt.Sprintf("/workflows/%d/pause", w.ready[1]), fmt.Sprintf("/workflows?parent=%d", w.finished[0]),
		"/bulk/cancel?state=paused", "/paused", "/waiting", "/limits", "/definitions", "/actions",
		"/stuck", "/stuck?in_progress_after=1s&scheduled_after=-1h", "/schedules", "/stats", "/metrics",
	}
	bodies := map[string]string{}
	for _, page := range pages {
		r := get(t, h, page)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", page, r.body)
		bodies[page] = r.body
	}

	// the overview: the cells' counts added up, and each cell's
	require.Contains(t, bodies["/"], `<a href="/workflows?type=Payment&amp;state=paused">5</a>`)
	require.Contains(t, bodies["/"], `id="cells"`)
	for _, name := range names {
		require.Contains(t, bodies["/"], "<th>"+name+"</th>", "the overview's cells")
	}
	require.Contains(t, bodies["/"], "<th>cell</th>", "the queue lags' cell column")
	require.Regexp(t, `<td>mail</td><td>geneva_cell\d_`, bodies["/"], "the queue lags' cell column")
	// the lists of rows: each row's cell
	for _, page := range []string{"/paused", "/stuck?in_progress_after=1s&scheduled_after=-1h", "/actions", "/schedules", "/stats"} {
		require.Contains(t, bodies[page], "<th>cell</th>", page)
		require.Regexp(t, `<td>geneva_cell\d_\d+_\d+</td>`, bodies[page], page)
	}
	cellsOfActions := regexp.MustCompile(`<td>(geneva_cell\d)_`).FindAllStringSubmatch(bodies["/actions"], -1)
	seen := map[string]bool{}
	for _, m := range cellsOfActions {
		seen[m[1]] = true
	}
	require.Len(t, seen, 2, "the actions of both cells, merged")
	// the lists: both cells' workflows
	require.ElementsMatch(t, ids(append(append([]int64{w.ready[0]}, w.gatewayTimeout...), w.cardDeclined...)...),
		rowsOf(bodies["/workflows?state=paused"]))
	for _, id := range w.gatewayTimeout {
		require.Contains(t, bodies["/paused"], fmt.Sprintf("/workflows/%d", id))
	}
	require.Contains(t, bodies["/stuck?in_progress_after=1s&scheduled_after=-1h"], fmt.Sprintf("/workflows/%d", w.ready[1]),
		"a session's thresholds reach the cells")
	require.Contains(t, bodies["/schedules"], "digest")
	require.Contains(t, bodies["/definitions"], "Payment")
	require.Contains(t, bodies["/stats"], "authorize")
	require.Contains(t, bodies["/actions"], fmt.Sprintf("/workflows/%d", w.canceled))
	require.Contains(t, bodies[fmt.Sprintf("/workflows/%d", w.gatewayTimeout[0])], "GatewayTimeout")
	require.Regexp(t, regexp.MustCompile(`(?s)Steps ended per minute.*<svg class="chart"`), bodies["/"])
	require.False(t, strings.Contains(bodies["/"], "No workflows yet"))

	// The error filter's suggestions: each cell's classes, merged
	// (geneva.error_classes through the router: a few rows a cell), with the
	// router's step_errors view renamed away, which read every cell's whole
	// view once a class
	_, err := router.Exec(ctx, "alter view geneva.step_errors rename to step_errors_away")
	require.NoError(t, err)
	r := get(t, h, "/workflows")
	_, err = router.Exec(ctx, "alter view geneva.step_errors_away rename to step_errors")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Regexp(t, `(?s)<datalist id="error-classes">.*<option value="CardDeclined">.*<option value="GatewayTimeout">.*</datalist>`, r.body)
	errorClasses := func(db *pgxpool.Pool, limit int) []string {
		rows, err := db.Query(ctx, "select geneva.error_classes($1)", limit)
		require.NoError(t, err)
		classes, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return classes
	}
	// each cell's own, merged once each, in order, at most the limit
	union := map[string]bool{}
	for _, cell := range cells {
		for _, class := range errorClasses(cell, 100) {
			union[class] = true
		}
	}
	require.Len(t, union, 2, "the two classes, from the cells")
	require.Equal(t, []string{"CardDeclined", "GatewayTimeout"}, errorClasses(router, 100))
	require.Equal(t, []string{"CardDeclined"}, errorClasses(router, 1))

	// One workflow's rows of a view are read from the one cell its id routes
	// to (geneva.cell_<view>), not from every cell's whole view: with the
	// other cell's views renamed away, the workflow page and goclient's
	// reads of that workflow work, where a read of a whole view fails.
	id := w.canceled
	other := cells[1-int(id&(partitions-1))%2]
	page := fmt.Sprintf("/workflows/%d", id)
	before := get(t, h, page)
	require.Equal(t, http.StatusOK, before.status, "%s: %s", page, before.body)
	views := []string{"workflow_timeline", "workflow_children", "workflow_list", "action_log", "awaiting_events", "workflow_blockers"}
	for _, view := range views {
		_, err := other.Exec(ctx, fmt.Sprintf("alter view geneva.%s rename to %s_away", view, view))
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, view := range views {
			_, _ = other.Exec(ctx, fmt.Sprintf("alter view geneva.%s_away rename to %s", view, view))
		}
	})
	_, err = router.Exec(ctx, "select count(*) from geneva.workflow_timeline")
	require.ErrorContains(t, err, "does not exist", "a whole view is read from every cell")
	r = get(t, h, page)
	require.Equal(t, http.StatusOK, r.status, "%s: %s", page, r.body)
	require.Equal(t, strings.Count(before.body, "<tr"), strings.Count(r.body, "<tr"), "the same rows")
	client := goclient.New(router)
	require.True(t, client.OnRouter(ctx))
	timeline, err := client.Timeline(ctx, id)
	require.NoError(t, err)
	require.NotEmpty(t, timeline)
	actions, err := client.ActionLog(ctx, &goclient.ActionLogParams{WorkflowID: id})
	require.NoError(t, err)
	require.NotEmpty(t, actions, "the cancel")
	require.Equal(t, actions[0].Cell, names[int(id&(partitions-1))%2])
	_, err = client.ChildCounts(ctx, id)
	require.NoError(t, err)
	_, err = client.Retries(ctx, id)
	require.NoError(t, err)
	_, err = client.AwaitingEvents(ctx, &goclient.AwaitingEventsParams{WorkflowID: id})
	require.NoError(t, err)
	_, err = client.CountAwaitingEvents(ctx, &goclient.AwaitingEventsParams{WorkflowID: id})
	require.NoError(t, err)
	_, err = client.WorkflowBlockers(ctx, &goclient.WorkflowBlockersParams{WorkflowID: id})
	require.NoError(t, err)
}
