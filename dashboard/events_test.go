package dashboard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// awaiting is what addAwaiting adds to a world: workflows whose first step
// awaits an event.
type awaiting struct {
	// Expense: awaits "approved" for two days, then pauses
	expenses []int64
	// Refund: awaits "returned" for a day, then runs without it
	refund int64
}

// addAwaiting defines Expense and Refund, whose first steps await an event,
// and creates two expenses and a refund.
func addAwaiting(t *testing.T, w *world) *awaiting {
	t.Helper()
	w.exec(t, `select geneva.define_workflow('Expense', '{"steps": [
		{"name": "approve", "await": {"event": "approved", "timeout": "2 days", "on_timeout": "pause"}},
		{"name": "reimburse"}]}')`)
	w.exec(t, `select geneva.define_workflow('Refund', '{"steps": [
		{"name": "wait_for_return", "await": {"event": "returned", "timeout": "1 day"}}]}')`)
	a := &awaiting{}
	for i := range 2 {
		a.expenses = append(a.expenses, w.create(t, "Expense", "claim-"+string(rune('a'+i))))
	}
	a.refund = w.create(t, "Refund", "order-a")
	return a
}

// events returns the payloads of the events sent to a workflow ("" for
// none), in order.
func (w *world) events(t *testing.T, workflowID int64) []string {
	t.Helper()
	rows, err := w.pool.Query(w.ctx, "select coalesce(payload::text, '') from geneva.events where workflow_id = $1 order by id", workflowID)
	require.NoError(t, err)
	defer rows.Close()
	var payloads []string
	for rows.Next() {
		var p string
		require.NoError(t, rows.Scan(&p))
		payloads = append(payloads, p)
	}
	require.NoError(t, rows.Err())
	return payloads
}

// isAwaiting tells whether geneva.awaiting_events lists the workflow.
func (w *world) isAwaiting(t *testing.T, workflowID int64) bool {
	t.Helper()
	var yes bool
	require.NoError(t, w.pool.QueryRow(w.ctx,
		"select exists (select from geneva.awaiting_events where workflow_id = $1)", workflowID).Scan(&yes))
	return yes
}

func TestWaiting(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := addAwaiting(t, w)
	h := w.newHandler(t, nil)

	r := get(t, h, "/waiting")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `<a href="/waiting" aria-current="page">Waiting</a>`)
	// the soonest timeout first: the refund's day, then the expenses' two
	require.Equal(t, ids(a.refund, a.expenses[0], a.expenses[1]), rowsOf(r.body))
	require.Regexp(t, fmt.Sprintf(`(?s)<tr id="w%d">.*?<td>approve</td>.*?<code class="event">approved</code>.*?`+
		`<td><span title="since [^"]+ UTC">[^<]+</span></td>.*?>in (2d00h|47h59m)</span></td>.*?<td>pause</td>`, a.expenses[0]), r.body)
	require.Contains(t, r.body, fmt.Sprintf(`href="/workflows/%d/send-event?event=approved&amp;back=waiting">Send event…</a>`, a.expenses[0]))
	require.Contains(t, r.body, `hx-trigger="every 5s"`, "a live page")
	// every page's navigation has it, and the overview counts them
	r = get(t, h, "/")
	require.Contains(t, r.body, `<a href="/waiting">Waiting</a>`)
	require.Contains(t, r.body, `id="waiting-count"><span class="n">3</span> awaiting an event</a>`)

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"event=returned", ids(a.refund)},
		{"type=Expense", ids(a.expenses...)},
		{"type=Expense&event=returned", nil},
	} {
		r := get(t, h, "/waiting?"+tc.query)
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Equal(t, tc.want, rowsOf(r.body), tc.query)
		if tc.want == nil {
			require.Contains(t, r.body, "No step of this filter awaits an event.")
		}
	}

	// a paused workflow still awaits its event, and says it is paused
	w.exec(t, "select geneva.pause_workflow($1)", a.expenses[1])
	r = get(t, h, "/waiting?type=Expense")
	require.Regexp(t, fmt.Sprintf(`(?s)<tr id="w%d">.*?<td>approve <span class="state paused">paused</span></td>`, a.expenses[1]), r.body)

	// the workflow's own page says what it awaits, and offers to send it
	r = get(t, h, fmt.Sprint("/workflows/", a.expenses[0]))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Regexp(t, `<dd id="awaits"><code class="event">approved</code> for [^;]+; timeout in (2d00h|47h59m) \(then: pause\)</dd>`, r.body)
	require.Contains(t, r.body, `id="action-send-event"`)
	r = get(t, h, fmt.Sprint("/workflows/", w.finished[0]))
	require.NotContains(t, r.body, `id="action-send-event"`, "an ended workflow gets no event")

	// nothing awaits: it says so
	empty := (&world{ctx: w.ctx, pool: dbtest.NewPool(t)}).newHandler(t, nil)
	r = get(t, empty, "/waiting")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, "No step awaits an event.")
}

func TestSendEvent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := addAwaiting(t, w)
	h := w.newHandler(t, nil)
	id := a.expenses[0]
	path := fmt.Sprintf("/workflows/%d/send-event", id)

	// the form: the event it awaits, a payload, and the question
	r := get(t, h, path+"?event=approved&back=waiting")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `<input name="event" id="event" value="approved"`)
	require.Contains(t, r.body, `<textarea name="payload" id="payload"`)
	require.Contains(t, r.body, `<input type="hidden" name="back" value="waiting">`)
	require.Contains(t, r.body, fmt.Sprintf(`<input type="hidden" name="csrf" value="%s">`, h.csrf))
	require.Contains(t, r.body, "Its step <strong>approve</strong> awaits <code>approved</code>")
	require.Contains(t, r.body, fmt.Sprintf("Do you want to send this event to workflow %d?", id))
	require.Contains(t, r.body, `<a href="/waiting" aria-current="page">Waiting</a>`)
	// without ?event=, the one it awaits
	require.Contains(t, get(t, h, path).body, `value="approved"`)

	form := func(event, payload, back string, csrf bool) url.Values {
		v := url.Values{"event": {event}, "payload": {payload}, "back": {back}}
		if csrf {
			v.Set("csrf", h.csrf)
		}
		return v
	}

	t.Run("InvalidJSONSendsNothing", func(t *testing.T) {
		r := post(t, h, path, form("approved", `{"approved_by": ann}`, "waiting", true))
		require.Equal(t, http.StatusBadRequest, r.status, r.body)
		require.Contains(t, r.body, `<p class="error" role="alert">Nothing was sent: the payload is not JSON (invalid character`)
		require.Contains(t, r.body, `{&#34;approved_by&#34;: ann}</textarea>`, "the payload is kept, to fix it")
		require.Empty(t, w.events(t, id))
		require.True(t, w.isAwaiting(t, id))
	})

	t.Run("NoCSRFSendsNothing", func(t *testing.T) {
		r := post(t, h, path, form("approved", `{}`, "waiting", false))
		require.Equal(t, http.StatusForbidden, r.status)
		require.Contains(t, r.body, "security token")
		// from another site, refused before the form is read
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form("approved", `{}`, "", true).Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		require.Equal(t, http.StatusForbidden, do(t, h, req).status)
		require.Empty(t, w.events(t, id))
	})

	t.Run("TheEnginesRefusalInASentence", func(t *testing.T) {
		r := post(t, h, path, form("", `{}`, "waiting", true))
		require.Equal(t, http.StatusBadRequest, r.status, r.body)
		require.Contains(t, r.body, `<p class="error" role="alert">Refused: `)
		r = post(t, h, path, form(strings.Repeat("e", 256), "", "", true))
		require.Equal(t, http.StatusBadRequest, r.status, r.body)
		require.Empty(t, w.events(t, id))
		r = post(t, h, "/workflows/999999/send-event", form("approved", "", "", true))
		require.Equal(t, http.StatusNotFound, r.status, r.body)
	})

	t.Run("SentGoesBackToWaiting", func(t *testing.T) {
		r := post(t, h, path, form("approved", ` {"approved_by": "ann", "amount": 120} `, "waiting", true))
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		location := r.header.Get("Location")
		require.Equal(t, fmt.Sprintf("/waiting?sent=%d&event_sent=approved", id), location)
		require.Equal(t, []string{`{"amount": 120, "approved_by": "ann"}`}, w.events(t, id))
		require.False(t, w.isAwaiting(t, id))

		r = get(t, h, location)
		require.Contains(t, r.body, fmt.Sprintf(`<p class="notice" role="status">Sent approved to workflow %d.</p>`, id))
		require.NotContains(t, rowsOf(r.body), fmt.Sprint(id), "it left the list")
		require.Contains(t, rowsOf(r.body), fmt.Sprint(a.expenses[1]))
	})

	t.Run("SentWithoutPayloadGoesBackToTheWorkflow", func(t *testing.T) {
		other := a.refund
		r := post(t, h, fmt.Sprintf("/workflows/%d/send-event", other), form("returned", "  ", "", true))
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		require.Equal(t, fmt.Sprintf("/workflows/%d?done=send-event", other), r.header.Get("Location"))
		require.Equal(t, []string{""}, w.events(t, other), "no payload")
		require.Contains(t, get(t, h, r.header.Get("Location")).body, `<p class="notice" role="status">Event sent.</p>`)
	})

	t.Run("TheFormSentTwiceRecordsOneEvent", func(t *testing.T) {
		other := a.expenses[1]
		otherPath := fmt.Sprintf("/workflows/%d/send-event", other)
		page := get(t, h, otherPath).body
		m := regexp.MustCompile(`<input type="hidden" name="key" value="(dashboard-[A-Za-z0-9]+)">`).FindStringSubmatch(page)
		require.NotNil(t, m, "the form carries a key:\n%s", page)
		require.NotContains(t, get(t, h, otherPath).body, m[1], "each form its own")
		sent := form("approved", `{"n": 1}`, "", true)
		sent.Set("key", m[1])
		r := post(t, h, otherPath, sent)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		r = post(t, h, otherPath, sent)
		require.Equal(t, http.StatusConflict, r.status, r.body)
		require.Contains(t, r.body, "Nothing was sent: this form was sent already, and its event is recorded once.")
		require.Equal(t, []string{`{"n": 1}`}, w.events(t, other))
	})

	t.Run("ToAnEndedWorkflowNothingIsSent", func(t *testing.T) {
		ended := w.finished[0]
		r := post(t, h, fmt.Sprintf("/workflows/%d/send-event", ended), form("approved", `{}`, "", true))
		require.Equal(t, http.StatusConflict, r.status, r.body)
		require.Contains(t, r.body, fmt.Sprintf("Nothing was sent: workflow %d has ended.", ended))
		require.Empty(t, w.events(t, ended))
	})
}

func TestSendEventReadOnlyAndRoles(t *testing.T) {
	t.Parallel()
	conf := dbtest.NewConfig(t)
	w := &world{ctx: t.Context(), pool: dbtest.NewPoolConfig(t, conf)}
	fillWorld(t, w)
	a := addAwaiting(t, w)
	id := a.expenses[0]
	path := fmt.Sprintf("/workflows/%d/send-event", id)

	readOnly := w.newHandler(t, &Config{ReadOnly: true})
	r := get(t, readOnly, "/waiting")
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, ids(a.refund, a.expenses[0], a.expenses[1]), rowsOf(r.body))
	require.NotContains(t, r.body, "Send event")
	require.NotContains(t, get(t, readOnly, fmt.Sprint("/workflows/", id)).body, `id="action-send-event"`)
	require.Equal(t, http.StatusForbidden, get(t, readOnly, path).status)
	r = post(t, readOnly, path, url.Values{"csrf": {readOnly.csrf}, "event": {"approved"}})
	require.Equal(t, http.StatusForbidden, r.status)
	require.Contains(t, r.body, "read-only")

	// a reader's dashboard that is not read-only is refused by the engine
	reader, err := New(dbtest.NewPoolAs(t, conf, dbtest.Reader), nil)
	require.NoError(t, err)
	rh := reader.(*handler)
	require.Equal(t, http.StatusOK, get(t, rh, "/waiting").status)
	r = post(t, rh, path, url.Values{"csrf": {rh.csrf}, "event": {"approved"}})
	require.Equal(t, http.StatusForbidden, r.status)
	require.Contains(t, r.body, "permission denied for function send_event")
	require.Empty(t, w.events(t, id))

	// an operator's sends it
	operator, err := New(dbtest.NewPoolAs(t, conf, dbtest.Operator), nil)
	require.NoError(t, err)
	oh := operator.(*handler)
	r = post(t, oh, path, url.Values{"csrf": {oh.csrf}, "event": {"approved"}, "payload": {`"yes"`}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, []string{`"yes"`}, w.events(t, id))
}

// A workflow's page shows the event each step received, under its own
// heading: its name, who sent it, and its payload (issue 47).
func TestWorkflowEventReceived(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := addAwaiting(t, w)
	h := w.newHandler(t, nil)
	id := a.expenses[0]

	// before: no event column
	r := get(t, h, fmt.Sprint("/workflows/", id))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.NotContains(t, r.body, "<th>event received</th>")

	long := strings.Repeat("x", 3000)
	w.exec(t, `select geneva.send_event($1, 'approved', jsonb_build_object('approved_by', 'ann', 'note', $2::text))`, id, long)
	var execution int64
	require.NoError(t, w.pool.QueryRow(w.ctx, "select id from geneva.step_history($1) where state = 'scheduled'", id).Scan(&execution))
	w.exec(t, "select from geneva.start_step($1)", execution)
	var sender string
	require.NoError(t, w.pool.QueryRow(w.ctx, "select session_user").Scan(&sender))

	r = get(t, h, fmt.Sprint("/workflows/", id))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, "<th>event received</th>")
	require.Regexp(t, fmt.Sprintf(`(?s)<tr id="e%d".*<td class="event"><code class="event-name">approved</code> <span class="dim">from %s, <time`,
		execution, sender), r.body)
	// the payload's start, and its first 2,000 characters unfolded
	require.Contains(t, r.body, `<summary><code class="payload">{&#34;note&#34;: &#34;xxx`)
	require.Contains(t, r.body, strings.Repeat("x", maxPayload-20))
	require.NotContains(t, r.body, long)
	// the other workflow awaits still: its page has no event column
	r = get(t, h, fmt.Sprint("/workflows/", a.expenses[1]))
	require.NotContains(t, r.body, "<th>event received</th>")
}
