package dashboard

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// blockerOf is the workflow page's "not started" line of a reason, its
// spaces folded ("" when there is none).
func blockerOf(t *testing.T, h http.Handler, workflowID int64, reason string) string {
	t.Helper()
	r := get(t, h, fmt.Sprintf("/workflows/%d", workflowID))
	require.Equal(t, http.StatusOK, r.status, r.body)
	m := regexp.MustCompile(`(?s)<dt>not started</dt><dd class="blocker" data-reason="` + reason + `">(.*?)</dd>`).FindStringSubmatch(r.body)
	if m == nil {
		return ""
	}
	return regexp.MustCompile(`\s+`).ReplaceAllString(m[1], " ")
}

// reportQueue records a worker's report of a queue, as River's producers
// do at their start and every 10 minutes.
func (w *world) reportQueue(t *testing.T, queue string) {
	t.Helper()
	w.exec(t, `insert into public.river_queue (name, created_at, updated_at, metadata) values ($1, now(), now(), '{}')
		on conflict (name) do update set updated_at = now(), paused_at = null`, queue)
}

// addRateHeld defines Call, of a rate of 1 per 100 days, and creates two:
// the first starts, the second's start is reserved for the next window.
func addRateHeld(t *testing.T, w *world) (started, held int64) {
	t.Helper()
	w.exec(t, `select geneva.define_workflow('Call', '{"rate_limit": {"by": "type", "limit": 1, "per": "100 days"}, "steps": [{"name": "dial"}]}')`)
	started, held = w.create(t, "Call", "first"), w.create(t, "Call", "second")
	for _, id := range []int64{started, held} {
		w.exec(t, "select geneva.start_step(id) from geneva.step_history($1) where state = 'scheduled'", id)
	}
	return started, held
}

func TestWorkflowPageSaysWhyNotStarted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	l := addLimited(t, w)
	_, held := addRateHeld(t, w)
	h := w.newHandler(t, nil)
	w.reportQueue(t, "default")

	// a concurrency key: in progress of its limit, the place in line
	require.Equal(t, `held by <a href="/limits">the concurrency of TenantSync (key acme)</a>: <strong>1 in progress of 1</strong>, it is <strong>1st</strong> of 1 waiting for a slot`,
		blockerOf(t, h, l.acme[1], "concurrency"))
	require.Empty(t, blockerOf(t, h, l.acme[0], "concurrency"), "running")

	// a rate window: its starts, and when the reserved one begins
	require.Regexp(t, `^held by <a href="/limits">the rate_limit of Call \(key Call\)</a>: <strong>1 start of 1</strong> per 100d00h in the current window; its start is reserved for the window at <time .*</time> \(in \d+d\d\dh\)$`,
		blockerOf(t, h, held, "rate_limit"))

	// a queue no worker serves (Onboarding's, mail), then served
	require.Equal(t, `due, but <a href="/stuck#unserved">no worker serves</a> the queue <code>mail</code>: no worker ever reported it; no fetch recorded`,
		blockerOf(t, h, w.ready[0], "queue"))
	w.reportQueue(t, "mail")
	r := get(t, h, fmt.Sprintf("/workflows/%d", w.ready[0]))
	require.NotContains(t, r.body, "not started", "in its queue's line")

	// its wait: Onboarding's nudge, a day after welcome
	w.step(t, w.ready[0], "")
	require.Regexp(t, `^its wait has not passed: due <time .*</time> \(in 2[34]h\d\dm\)$`, blockerOf(t, h, w.ready[0], "wait"))

	// a paused workflow says nothing of the kind
	r = get(t, h, fmt.Sprintf("/workflows/%d", w.gatewayTimeout[0]))
	require.NotContains(t, r.body, "not started")
}

func TestStuckPageListsUnservedQueues(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, nil)
	w.reportQueue(t, "default")

	// Onboarding's queue, mail: no worker ever reported it
	r := get(t, h, "/stuck")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, "Nothing is stuck.", "not overdue by the threshold")
	require.Contains(t, r.body, `<h2 id="unserved">Due on a queue no worker serves</h2>`)
	table := regexp.MustCompile(`(?s)<table class="list" id="unserved-executions">.*?</table>`).FindString(r.body)
	body := regexp.MustCompile(`(?s)<tbody>.*</tbody>`).FindString(table)
	rows := regexp.MustCompile(`(?s)<tr>.*?</tr>`).FindAllString(body, -1)
	require.Len(t, rows, 2)
	for i, id := range w.ready {
		require.Contains(t, rows[i], fmt.Sprintf(`<a href="/workflows/%d#e`, id))
		require.Contains(t, rows[i], `<td class="queue"><code>mail</code></td>`)
		require.Contains(t, rows[i], `<span class="dim">never</span>`)
	}

	// paused in River
	w.exec(t, `insert into public.river_queue (name, created_at, updated_at, paused_at, metadata) values ('mail', now(), now(), now(), '{}')`)
	r = get(t, h, "/stuck")
	require.Contains(t, r.body, `<td class="queue"><code>mail</code> (paused in River)</td>`)

	// a worker serves it
	w.reportQueue(t, "mail")
	r = get(t, h, "/stuck")
	require.NotContains(t, r.body, `id="unserved"`)
}

// The Limits page counts the executions a rate holds as waiting.
func TestLimitsPageCountsRateHeldWaiting(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addRateHeld(t, w)
	h := w.newHandler(t, nil)
	r := get(t, h, "/limits")
	require.Equal(t, http.StatusOK, r.status, r.body)
	row := limitRowOf(t, r.body, "Call", "Call")
	require.Contains(t, row, `<td class="num waiting">1</td>`)
	require.Contains(t, row, `<td class="num starts full">1 / 1</td>`)
}
