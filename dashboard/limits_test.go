package dashboard

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// limited is what addLimited adds to a world: TenantSync, of a concurrency
// of 1 per group, whose step names the named limit payments_api (100 starts
// per 100 days, one key: windows long enough that none ends during a test).
type limited struct {
	// acme's first runs, its second waits for the slot; globex's runs
	acme   []int64
	globex int64
}

func addLimited(t *testing.T, w *world) *limited {
	t.Helper()
	w.exec(t, `select geneva.define_limit('payments_api', p_rate => 100, p_per => '100 days')`)
	w.exec(t, `select geneva.define_workflow('TenantSync', '{
		"concurrency": {"by": "group", "limit": 1},
		"steps": [{"name": "charge", "limits": ["payments_api"]}, {"name": "report"}]}')`)
	l := &limited{}
	for i, group := range []string{"acme", "acme", "globex"} {
		var id int64
		require.NoError(t, w.pool.QueryRow(w.ctx, "select geneva.create_workflow('TenantSync', 'Account', $1, p_group => $2)",
			fmt.Sprint("account-", i), group).Scan(&id))
		w.exec(t, "select geneva.start_step(id) from geneva.step_history($1) where state = 'scheduled'", id)
		if group == "acme" {
			l.acme = append(l.acme, id)
		} else {
			l.globex = id
		}
	}
	return l
}

// limitRowOf finds the row of a limit's key on the Limits page.
func limitRowOf(t *testing.T, body, limit, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr>\s*<td>[^\n]*>` + regexp.QuoteMeta(limit) + `<.*?<td class="key">` + regexp.QuoteMeta(key) + `</td>.*?</tr>`).FindString(body)
	require.NotEmpty(t, m, "no row of %s %s in %s", limit, key, body)
	return m
}

func TestLimitsPage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, nil)

	r := get(t, h, "/limits")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `<a href="/limits" aria-current="page">Limits</a>`)
	require.Contains(t, r.body, "No limit is in use")

	l := addLimited(t, w)
	r = get(t, h, "/limits")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `hx-trigger="every 5s"`, "a live page")
	// acme: its slot held, one waiting; globex: its slot held
	acme := limitRowOf(t, r.body, "TenantSync", "acme")
	require.Contains(t, acme, `<a href="/workflows?type=TenantSync">TenantSync</a>`)
	require.Contains(t, acme, `<td>concurrency</td>`)
	require.Contains(t, acme, `<td class="num in-progress full">1 / 1</td>`)
	require.Contains(t, acme, `<td class="num waiting">1</td>`)
	require.Regexp(t, `<span title="since [^"]+ UTC">(under a second|\ds)</span>`, acme)
	globex := limitRowOf(t, r.body, "TenantSync", "globex")
	require.Contains(t, globex, `<td class="num waiting">0</td>`)
	// the named limit, one key for all: two starts of its 100 in the window
	named := limitRowOf(t, r.body, "payments_api", `<span class="dim">—</span>`)
	require.Contains(t, named, `<code class="limit">payments_api</code>`)
	require.Contains(t, named, `<td class="num starts">2 / 100</td>`)
	require.Regexp(t, `<span title="at [^"]+ UTC">in \d+d\d\dh</span>`, named)

	// every page's navigation has it
	r = get(t, h, "/")
	require.Contains(t, r.body, `<a href="/limits">Limits</a>`)

	// the workflow's page shows its group
	r = get(t, h, fmt.Sprint("/workflows/", l.acme[1]))
	require.Contains(t, r.body, `<dt>group</dt><dd id="workflow-group"><a href="/workflows?group=acme">acme</a></dd>`)
	r = get(t, h, fmt.Sprint("/workflows/", w.ready[0]))
	require.NotContains(t, r.body, `id="workflow-group"`, "a workflow without a group")

	// the list shows each workflow's group, and filters by it
	r = get(t, h, "/workflows?group=acme")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Equal(t, ids(l.acme[1], l.acme[0]), rowsOf(r.body))
	require.Contains(t, r.body, `<td class="group"><a href="/workflows?group=acme">acme</a></td>`)
	require.Contains(t, r.body, `<input name="group" value="acme"`)
	r = get(t, h, "/workflows?type=TenantSync")
	require.Equal(t, ids(l.globex, l.acme[1], l.acme[0]), rowsOf(r.body))
	require.Contains(t, r.body, `<td class="group"><a href="/workflows?group=globex">globex</a></td>`)
	r = get(t, h, "/workflows?type=Onboarding")
	require.Contains(t, r.body, `<td class="group"></td>`, "a workflow without a group")

	// acme's running step ends: its waiter is passed the slot
	w.exec(t, "select geneva.complete_step(id) from geneva.step_history($1) where state = 'in_progress'", l.acme[0])
	r = get(t, h, "/limits")
	acme = limitRowOf(t, r.body, "TenantSync", "acme")
	require.Contains(t, acme, `<td class="num in-progress full">1 / 1</td>`)
	require.Contains(t, acme, `<td class="num waiting">0</td>`)
}

// A reader (the dashboard's least privilege) sees the Limits page with
// limits in use.
func TestLimitsPageAsReader(t *testing.T) {
	t.Parallel()
	conf := dbtest.NewConfig(t)
	w := &world{ctx: t.Context(), pool: dbtest.NewPoolConfig(t, conf)}
	fillWorld(t, w)
	addLimited(t, w)
	reader, err := New(dbtest.NewPoolAs(t, conf, dbtest.Reader), &Config{ReadOnly: true})
	require.NoError(t, err)
	r := get(t, reader, "/limits")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, limitRowOf(t, r.body, "TenantSync", "acme"), `<td class="num waiting">1</td>`)
}
