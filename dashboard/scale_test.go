package dashboard

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScale times every page over a large history: set
// GENEVA_DASHBOARD_SCALE to the number of finished workflows (e.g. 1000000;
// filling takes minutes). Every page must answer in under a second.
func TestScale(t *testing.T) {
	size, _ := strconv.Atoi(os.Getenv("GENEVA_DASHBOARD_SCALE"))
	if size == 0 {
		t.Skip("set GENEVA_DASHBOARD_SCALE=1000000 to time the pages over a million finished workflows")
	}
	w := newWorld(t)
	start := time.Now()
	fillHistory(t, w, size)
	t.Logf("filled %d finished workflows in %s", size, time.Since(start).Round(time.Second))

	h := w.newHandler(t, nil)
	var mid int64
	require.NoError(t, w.pool.QueryRow(w.ctx, "select max(workflow_id) / 2 from geneva.workflow_list").Scan(&mid))
	for _, path := range scalePaths(w, mid) {
		best := time.Hour
		var status int
		for range 3 {
			began := time.Now()
			r := get(t, h, path)
			best = min(best, time.Since(began))
			status = r.status
		}
		t.Logf("%-70s %4d %8.1f ms", path, status, float64(best)/float64(time.Millisecond))
		require.Equal(t, http.StatusOK, status, path)
		require.Less(t, best, time.Second, path)
	}
}

// scalePaths are the pages TestScale times: each page, and each filter.
func scalePaths(w *world, mid int64) []string {
	return []string{
		"/",
		"/workflows",
		"/workflows?state=paused",
		"/workflows?state=ongoing",
		"/workflows?state=finished",
		"/workflows?type=Payment",
		"/workflows?type=ScaleHistory",
		"/workflows?error_class=Timeout",
		"/workflows?error_class=GatewayTimeout&state=paused",
		"/workflows?error_class=Rare",
		"/workflows?hero=User:history-5000",
		"/workflows?hero=history-5000",
		"/workflows?created_before=2000-01-01",
		fmt.Sprintf("/workflows?before=%d", mid),
		fmt.Sprintf("/workflows/%d", mid),
		fmt.Sprintf("/workflows/%d", w.gatewayTimeout[0]),
		"/paused",
		"/waiting",
		"/limits",
		"/schedules",
		"/waiting?event=approved",
		"/stuck",
		"/stats",
		"/definitions",
		"/actions",
		"/actions?verb=cancel_workflow&by=nobody&after=2000-01-01",
		"/bulk/cancel?error_class=Timeout",
		"/bulk/resume?state=paused",
	}
}

// fillHistory adds size finished workflows of type ScaleHistory, with
// three executions each, ended over the last thirty days; one in a hundred
// had a Timeout on its way (an exception reattempt), and one in a million a
// Rare error.
func fillHistory(t testing.TB, w *world, size int) {
	const chunk = 100_000
	for from := 0; from < size; from += chunk {
		to := min(from+chunk, size)
		_, err := w.pool.Exec(w.ctx, `
			with new as (
			  insert into geneva.workflows (
			    workflow_type, hero_type, hero_id, state, created_at, updated_at, started_at,
			    transitioned_at, finished_at
			  )
			  select 'ScaleHistory', 'User', 'history-' || g, 'finished', t - interval '1 hour', t,
			    t - interval '1 hour', t, t
			  from generate_series($1::bigint + 1, $2::bigint) g,
			    lateral (select now() - (g % 30) * interval '1 day' - (g % 86400) * interval '1 second' as t) at
			  returning id, finished_at
			)
			insert into geneva.step_executions (
			  workflow_id, step_name, attempt, state, outcome, scheduled_for, started_at, completed_at,
			  finished_at, error_class_name, error_message, created_at, updated_at
			)
			select new.id, s.name, 1, 'completed',
			  case when s.name = 'a' and new.id % 100 = 0 then 'reattempted_by_exception' else 'success' end,
			  new.finished_at - s.back, new.finished_at - s.back + interval '5 milliseconds',
			  new.finished_at - s.back + interval '20 milliseconds', new.finished_at - s.back + interval '20 milliseconds',
			  case when s.name = 'a' and new.id % 1000000 = 0 then 'Rare'
			    when s.name = 'a' and new.id % 100 = 0 then 'Timeout' end,
			  case when s.name = 'a' and new.id % 100 = 0 then 'i/o timeout' end,
			  new.finished_at - s.back, new.finished_at - s.back + interval '20 milliseconds'
			from new
			cross join (values ('a', interval '40 minutes'), ('b', interval '20 minutes'), ('c', interval '0')) s(name, back)`,
			from, to)
		require.NoError(t, err)
	}
	for _, table := range []string{"geneva.workflows", "geneva.step_executions"} {
		_, err := w.pool.Exec(w.ctx, "vacuum analyze "+table)
		require.NoError(t, err)
	}
}
