package dashboard

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// addRunaway defines Poll (one step, poll) and creates a workflow of it for
// the hero whose step is reattempted twice: three executions of poll in a
// row, past a runaway_repeats of 2 (which it sets). Housekeeping has not
// flagged it yet.
func addRunaway(t *testing.T, w *world, hero string) int64 {
	t.Helper()
	w.exec(t, `select geneva.define_workflow('Poll', '{"steps": [{"name": "poll"}]}')`)
	w.exec(t, "select geneva.set_housekeeping_settings(p_runaway_repeats => 2)")
	id := w.create(t, "Poll", hero)
	for range 2 {
		w.exec(t, `select geneva.complete_step((geneva.start_step(e.id)).execution_id, 'reattempt')
			from geneva.step_history($1) e where e.state = 'scheduled'`, id)
	}
	return id
}

// The Stuck page's runaway section lists the workflows housekeeping
// flagged, with the thresholds.
func TestStuckRunaways(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, nil)
	poll := addRunaway(t, w, "r1")

	r := get(t, h, "/stuck")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, "No runaway chains.", "housekeeping has not flagged it yet")
	require.Contains(t, r.body, "more than 1000 executions, or one step run more than 2 times in a row")

	w.exec(t, "select geneva.housekeep()")
	r = get(t, h, "/stuck")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.NotContains(t, r.body, "No runaway chains.")
	require.Regexp(t, fmt.Sprintf(`(?s)<table class="list" id="runaway-list">.*<a href="/workflows/%d">%d</a></td>\s*<td>Poll</td><td>Customer r1</td><td>ready</td>\s*<td class="num">3</td><td>poll</td><td class="num">3</td>`,
		poll, poll), r.body)
	require.Contains(t, r.body, "Nothing is stuck.", "a runaway is not stuck")
}
