package dashboard

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// The workflow page says which definition version a workflow follows and
// the one it started under; the Definitions page how many workflows each
// version still has ongoing (issue 49, item 7).
func TestDefinitionVersionsShown(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, nil)
	w.exec(t, `select geneva.define_workflow('Versioned', '{"steps": [{"name": "a", "wait": "1 hour"}]}')`)
	first := w.create(t, "Versioned", "v-1")

	r := get(t, h, fmt.Sprint("/workflows/", first))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `<dd id="definition-version"><a href="/definitions#d-Versioned">version 1</a></dd>`)
	r = get(t, h, "/definitions")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `version <span class="version">1</span>, <span class="ongoing">1</span> ongoing</span>`)

	w.exec(t, `select geneva.define_workflow('Versioned', '{"steps": [{"name": "a", "wait": "2 hours"}]}')`)
	r = get(t, h, fmt.Sprint("/workflows/", first))
	require.Contains(t, r.body, `<a href="/definitions#d-Versioned">version 2</a> (started under version 1)</dd>`)
	r = get(t, h, "/definitions")
	require.Contains(t, r.body, `version <span class="version">2</span></span></h2>`, "none started under 2")
	require.Contains(t, r.body, `>v1</span> <span class="ongoing" id="d-Versioned-v1-ongoing">(1 ongoing)</span>`)
}

// The Definitions page shows an await of any of several events, its since,
// and the events that cancel a type; the Waiting page every name a step
// awaits; a workflow such an event canceled shows canceled_by_event
// (issue 49, items 2 to 4).
func TestEventsHardenedShown(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, nil)
	w.exec(t, `select geneva.define_workflow('Claim', '{"steps": [
		{"name": "decide", "await": {"event": ["approved", "rejected"], "since": "wait", "timeout": "2 days"}},
		{"name": "pay"}], "cancel_on": ["claim.withdrawn"]}')`)
	waiting := w.create(t, "Claim", "c-1")
	withdrawn := w.create(t, "Claim", "c-2")
	w.exec(t, "select geneva.send_event($1, 'claim.withdrawn')", withdrawn)

	r := get(t, h, "/definitions")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `<li>canceled by the events: claim.withdrawn</li>`)
	require.Contains(t, r.body, `<code class="event">approved</code> | <code class="event">rejected</code> (2 days, then run; only since the wait)`)

	r = get(t, h, "/waiting")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, fmt.Sprintf(`id="w%d"`, waiting))
	require.Contains(t, r.body, `<a href="/waiting?event=rejected"><code class="event">rejected</code></a>`)
	require.Contains(t, r.body, `since the wait</span>`)

	r = get(t, h, fmt.Sprint("/workflows/", withdrawn))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, "<td>canceled</td><td>canceled_<wbr>by_<wbr>event</td>")
}
