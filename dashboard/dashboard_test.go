package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

type response struct {
	status int
	body   string
	header http.Header
}

func do(t *testing.T, h http.Handler, req *http.Request) response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{status: rec.Code, body: rec.Body.String(), header: rec.Header()}
}

func get(t *testing.T, h http.Handler, path string) response {
	t.Helper()
	return do(t, h, httptest.NewRequest(http.MethodGet, path, nil))
}

// post sends a form as a same-origin browser would.
func post(t *testing.T, h http.Handler, path string, form url.Values) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return do(t, h, req)
}

// rowsOf returns the workflow ids a list page links to, in order.
func rowsOf(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`<td class="num"><a href="[^"]*/workflows/(\d+)">`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func ids(list ...int64) []string {
	var s []string
	for _, id := range list {
		s = append(s, fmt.Sprint(id))
	}
	return s
}

func TestPages(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, nil)

	t.Run("Overview", func(t *testing.T) {
		r := get(t, h, "/")
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `<a href="/workflows?type=Payment">Payment</a>`)
		require.Contains(t, r.body, `<a href="/workflows?type=Payment&amp;state=paused">5</a>`)
		require.Contains(t, r.body, `<a href="/workflows?type=Onboarding&amp;state=ready">2</a>`)
		require.Regexp(t, `id="paused-count"><span class="n">5</span>`, r.body)
		require.Regexp(t, `id="stuck-count"><span class="n">0</span>`, r.body)
		require.Contains(t, r.body, `<svg class="chart"`)
		require.Contains(t, r.body, "succeeded</title>") // a bar of the chart
		// the two ready Onboarding workflows are due on queue mail
		require.Regexp(t, `<td>mail</td><td class="num">2</td>`, r.body)
		require.Contains(t, r.body, `hx-trigger="every 5s"`)
		require.Contains(t, r.header.Get("Content-Security-Policy"), "script-src 'self';")
	})

	t.Run("WorkflowsNewestFirst", func(t *testing.T) {
		r := get(t, h, "/workflows")
		require.Equal(t, http.StatusOK, r.status, r.body)
		all := rowsOf(r.body)
		require.Len(t, all, 10)
		require.Equal(t, fmt.Sprint(w.canceled), all[0])
		require.Contains(t, r.body, `<datalist id="error-classes"><option value="CardDeclined"><option value="GatewayTimeout"></datalist>`)
	})

	for _, tc := range []struct {
		name, query string
		want        []int64
	}{
		{"State", "state=paused", append(append([]int64{}, w.cardDeclined...), w.gatewayTimeout...)},
		{"Ongoing", "state=ongoing", append(append(append([]int64{}, w.ready...), w.cardDeclined...), w.gatewayTimeout...)},
		{"Type", "type=Onboarding", append(append([]int64{}, w.ready...), w.canceled)},
		{"HeroTypeAndID", "hero=Customer:card-a", w.cardDeclined[:1]},
		{"HeroID", "hero=gone", []int64{w.canceled}},
		{"ErrorClass", "error_class=GatewayTimeout", w.gatewayTimeout},
		{"ErrorClassAndState", "error_class=CardDeclined&state=finished", nil},
		{"CreatedAfter", "created_after=2999-01-01T00:00", nil},
		{"CreatedBefore", "created_before=2999-01-01", append(append(append(append([]int64{}, w.gatewayTimeout...), w.cardDeclined...), w.finished...), append(w.ready, w.canceled)...)},
	} {
		t.Run("WorkflowsFilter"+tc.name, func(t *testing.T) {
			r := get(t, h, "/workflows?"+tc.query)
			require.Equal(t, http.StatusOK, r.status, r.body)
			// newest first
			want := slices.Clone(tc.want)
			slices.SortFunc(want, func(a, b int64) int { return cmp.Compare(b, a) })
			require.Equal(t, ids(want...), rowsOf(r.body))
			if tc.want == nil {
				require.Contains(t, r.body, "No workflow matches")
			}
		})
	}

	t.Run("WorkflowsLinksKeepTheFilter", func(t *testing.T) {
		r := get(t, h, "/workflows?state=paused&error_class=Gateway+Timeout")
		require.Contains(t, r.body, `href="/bulk/cancel?error_class=Gateway&#43;Timeout&amp;state=paused"`)
		require.Contains(t, r.body, `href="/bulk/resume?error_class=Gateway&#43;Timeout&amp;state=paused"`)
	})

	t.Run("WorkflowsBadFilter", func(t *testing.T) {
		r := get(t, h, "/workflows?state=sleeping")
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Contains(t, r.body, `unknown state &#34;sleeping&#34;`)
		r = get(t, h, "/workflows?created_after=yesterday")
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Contains(t, r.body, "is not a time like")
	})

	t.Run("WorkflowsPagedByID", func(t *testing.T) {
		small := w.newHandler(t, &Config{PageSize: 4})
		var seen []string
		path := "/workflows?type=Payment"
		for path != "" {
			r := get(t, small, path)
			require.Equal(t, http.StatusOK, r.status, r.body)
			seen = append(seen, rowsOf(r.body)...)
			m := regexp.MustCompile(`id="next-page" href="([^"]+)"`).FindStringSubmatch(r.body)
			path = ""
			if m != nil {
				path = strings.ReplaceAll(m[1], "&amp;", "&")
				require.Contains(t, path, "type=Payment") // the filter stays
				require.Contains(t, path, "before=")
			}
		}
		require.Len(t, seen, 7)
		require.Equal(t, ids(w.finished[1]), seen[:1])
		require.Equal(t, ids(w.gatewayTimeout[0]), seen[6:])
	})

	t.Run("Workflow", func(t *testing.T) {
		id := w.gatewayTimeout[0]
		r := get(t, h, fmt.Sprint("/workflows/", id))
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `id="workflow-state">paused</span>`)
		// the steps of the definition and where it stands
		require.Regexp(t, `(?s)class="standing-done"><span class="step">authorize</span>.*class="standing-paused-here"><span class="step">capture</span>.*class="standing-pending"><span class="step">receipt</span>`, r.body)
		// the timeline: both executions, the error, its backtrace folded
		require.Contains(t, r.body, "<code>GatewayTimeout</code> the gateway said: GatewayTimeout")
		require.Contains(t, r.body, `<summary>backtrace</summary><pre>goroutine 1 [running]:`)
		require.Contains(t, r.body, "its chain: <code>GatewayTimeout</code>, <code>*url.Error</code>")
		require.Contains(t, r.body, "<td>paused_<wbr>by_<wbr>exception</td>") // (it may wrap after an underscore)
		require.Contains(t, r.body, `id="action-resume"`)
		require.Contains(t, r.body, `id="action-run-now"`)
		require.NotContains(t, r.body, `id="action-pause"`)
	})

	t.Run("WorkflowNotFound", func(t *testing.T) {
		r := get(t, h, "/workflows/999999")
		require.Equal(t, http.StatusNotFound, r.status)
		require.Contains(t, r.body, "workflow 999999 not found")
		r = get(t, h, "/workflows/abc")
		require.Equal(t, http.StatusNotFound, r.status)
	})

	t.Run("Paused", func(t *testing.T) {
		r := get(t, h, "/paused")
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Regexp(t, `(?s)<code>GatewayTimeout</code></td>\s*<td class="num">3</td>.*<code>CardDeclined</code></td>\s*<td class="num">2</td>`, r.body)
		require.Contains(t, r.body, `/workflows?state=paused&amp;error_class=GatewayTimeout`)
		require.Contains(t, r.body, `/bulk/resume?state=paused&amp;error_class=GatewayTimeout`)
		// the list, grouped: the larger group first
		require.Equal(t, append(ids(w.gatewayTimeout[2], w.gatewayTimeout[1], w.gatewayTimeout[0]), ids(w.cardDeclined[1], w.cardDeclined[0])...), rowsOf(r.body))
	})

	t.Run("Stuck", func(t *testing.T) {
		r := get(t, h, "/stuck")
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, "Nothing is stuck.")
		require.Contains(t, r.body, "<strong>15m00s</strong>", "the housekeeping settings' threshold")
		require.Contains(t, r.body, "a round every 1m00s", "and round interval")
		require.Contains(t, r.body, "the action log kept 30d00h, at least 30d00h", "and the action log's retention")
		require.Contains(t, r.body, "ended workflows moved to history 1h00m after they end, kept 30d00h in partitions of 24h00m, then dropped",
			"and history's settings")
		// with a threshold of nothing, the ready workflows' due steps are stuck
		r = get(t, h, "/stuck?scheduled_after=0+seconds")
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, "<strong>0 seconds</strong>")
		for _, id := range w.ready {
			require.Contains(t, r.body, fmt.Sprintf(`/workflows/%d#e`, id))
		}
		r = get(t, h, "/stuck?in_progress_after=banana")
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Contains(t, r.body, `invalid input syntax for type interval: &#34;banana&#34;`)
	})

	t.Run("Stats", func(t *testing.T) {
		r := get(t, h, "/stats")
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Regexp(t, `(?s)<td>authorize</td>\s*<td class="num">7</td>`, r.body)
		require.Regexp(t, `(?s)<td>authorize</td>.*<td>capture</td>.*<td>receipt</td>`, r.body) // in run order
		require.Contains(t, r.body, `<span class="outcome">success 5</span> <span class="outcome">paused_by_exception 2</span>`)
	})

	// (last: it adds a workflow)
	t.Run("WorkflowResumableStep", func(t *testing.T) {
		id := w.create(t, "Onboarding", "resumable")
		var first int64
		require.NoError(t, w.pool.QueryRow(w.ctx, "select id from geneva.step_history($1)", id).Scan(&first))
		w.exec(t, "select from geneva.start_step($1)", first)
		w.exec(t, `select geneva.checkpoint_step($1, '{"page": 2}')`, first)
		w.exec(t, "select geneva.complete_step($1, 'suspend')", first)
		r := get(t, h, fmt.Sprint("/workflows/", id))
		require.Equal(t, http.StatusOK, r.status, r.body)
		// the cursor under its own heading, not the error's
		require.Contains(t, r.body, "<th>cursor</th>")
		require.Contains(t, r.body, `<td class="cursor"><code>{&#34;page&#34;: 2}</code>`)
		require.Contains(t, r.body, fmt.Sprintf(`<div class="dim">continues <a href="#e%d">%d</a></div></td>`, first, first))
		require.NotRegexp(t, `<td class="exec-error">[^<]*<[^t]*&#34;page&#34;`, r.body)
		require.Contains(t, r.body, "suspended")
	})

	t.Run("Assets", func(t *testing.T) {
		for _, name := range []string{"htmx.min.js", "dashboard.js", "dashboard.css"} {
			r := get(t, h, "/assets/"+name)
			require.Equal(t, http.StatusOK, r.status, name)
		}
	})
}

func TestActions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, nil)
	csrf := url.Values{"csrf": {h.csrf}}

	t.Run("ConfirmThenResume", func(t *testing.T) {
		id := w.gatewayTimeout[0]
		r := get(t, h, fmt.Sprintf("/workflows/%d/resume", id))
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, fmt.Sprintf("Do you want to resume workflow %d?", id))
		require.Contains(t, r.body, `name="csrf" value="`+h.csrf+`"`)
		require.Equal(t, "paused", w.state(t, id), "asking changes nothing")

		r = post(t, h, fmt.Sprintf("/workflows/%d/resume", id), csrf)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		require.Equal(t, fmt.Sprintf("/workflows/%d?done=resume", id), r.header.Get("Location"))
		require.Equal(t, "ready", w.state(t, id))
		require.Contains(t, get(t, h, r.header.Get("Location")).body, "Resumed.")

		// again: the engine refuses, and the page says its sentence
		r = post(t, h, fmt.Sprintf("/workflows/%d/resume", id), csrf)
		require.Equal(t, http.StatusConflict, r.status)
		require.Contains(t, r.body, fmt.Sprintf("Refused: workflow %d cannot be resumed. Workflow is ready. Only paused workflows can be resumed", id))
	})

	t.Run("PauseSkipRunNowCancel", func(t *testing.T) {
		id := w.ready[0]
		require.Equal(t, http.StatusSeeOther, post(t, h, fmt.Sprintf("/workflows/%d/pause", id), csrf).status)
		require.Equal(t, "paused", w.state(t, id))
		require.Equal(t, http.StatusSeeOther, post(t, h, fmt.Sprintf("/workflows/%d/skip", id), csrf).status)
		var next string
		require.NoError(t, w.pool.QueryRow(w.ctx, "select next_step_name from geneva.get_workflow($1)", id).Scan(&next))
		require.Equal(t, "nudge", next)

		// run now, a named step
		r := get(t, h, fmt.Sprintf("/workflows/%d/run-now", id))
		require.Contains(t, r.body, "<option>welcome</option>")
		form := url.Values{"csrf": {h.csrf}, "step": {"welcome"}}
		require.Equal(t, http.StatusSeeOther, post(t, h, fmt.Sprintf("/workflows/%d/run-now", id), form).status)
		require.NoError(t, w.pool.QueryRow(w.ctx, "select next_step_name from geneva.get_workflow($1)", id).Scan(&next))
		require.Equal(t, "welcome", next)
		// a step the definition does not have: 22023's sentence
		form.Set("step", "dance")
		r = post(t, h, fmt.Sprintf("/workflows/%d/run-now", id), form)
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Contains(t, r.body, "workflow type Onboarding has no step dance. Its steps are welcome, nudge.")

		require.Equal(t, http.StatusSeeOther, post(t, h, fmt.Sprintf("/workflows/%d/cancel", id), csrf).status)
		require.Equal(t, "canceled", w.state(t, id))
	})

	t.Run("UnknownActionAndWorkflow", func(t *testing.T) {
		require.Equal(t, http.StatusNotFound, post(t, h, fmt.Sprintf("/workflows/%d/explode", w.ready[1]), csrf).status)
		r := post(t, h, "/workflows/999999/cancel", csrf)
		require.Equal(t, http.StatusNotFound, r.status)
		require.Contains(t, r.body, "workflow 999999 not found")
	})

	t.Run("CSRF", func(t *testing.T) {
		id := w.ready[1]
		path := fmt.Sprintf("/workflows/%d/cancel", id)
		// no token
		r := post(t, h, path, url.Values{})
		require.Equal(t, http.StatusForbidden, r.status)
		require.Contains(t, r.body, "security token")
		// a wrong token
		r = post(t, h, path, url.Values{"csrf": {"forged"}})
		require.Equal(t, http.StatusForbidden, r.status)
		// the right token from another site
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(csrf.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		r = do(t, h, req)
		require.Equal(t, http.StatusForbidden, r.status)
		require.Contains(t, r.body, "another site")
		// an old browser's Origin header from another site
		req = httptest.NewRequest(http.MethodPost, "http://dashboard.example"+path, strings.NewReader(csrf.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://evil.example")
		require.Equal(t, http.StatusForbidden, do(t, h, req).status)
		// a bulk action without the token
		r = post(t, h, "/bulk/cancel", url.Values{"upto": {"999999"}})
		require.Equal(t, http.StatusForbidden, r.status)
		// a GET never acts
		require.Equal(t, http.StatusOK, get(t, h, path).status)
		require.Equal(t, "ready", w.state(t, id))
	})
}

func TestBulk(t *testing.T) {
	t.Parallel()

	t.Run("CancelFilteredSetInBatches", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		h := w.newHandler(t, &Config{BulkBatchSize: 2})
		r := get(t, h, "/bulk/cancel?type=Payment")
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `<strong id="bulk-count">5</strong> workflows match the filter and are ongoing`)
		require.Contains(t, r.body, `<input type="hidden" name="type" value="Payment">`)
		upto := regexp.MustCompile(`name="upto" value="(\d+)"`).FindStringSubmatch(r.body)
		require.NotNil(t, upto)

		// a Payment created after the count is left alone
		late := w.create(t, "Payment", "late")
		r = post(t, h, "/bulk/cancel", url.Values{"csrf": {h.csrf}, "type": {"Payment"}, "upto": {upto[1]}, "count": {"5"}})
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `<strong id="acted">5</strong> acted on, <strong id="refused">0</strong> refused`)
		for _, id := range append(w.gatewayTimeout, w.cardDeclined...) {
			require.Equal(t, "canceled", w.state(t, id))
		}
		require.Equal(t, "ready", w.state(t, late))
		require.Equal(t, "finished", w.state(t, w.finished[0]))
	})

	t.Run("ResumeByErrorClassThenRetryReportsRefusals", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		h := w.newHandler(t, nil)
		r := get(t, h, "/bulk/resume?error_class=GatewayTimeout")
		require.Contains(t, r.body, `<strong id="bulk-count">3</strong> workflows match the filter and are paused`)
		// someone else cancels one while the bulk action runs
		raced := w.gatewayTimeout[1]
		h.beforeBulkCall = func(ctx context.Context) {
			_, err := w.pool.Exec(ctx, "select geneva.cancel_workflow($1)", raced)
			require.NoError(t, err)
		}
		r = post(t, h, "/bulk/resume", url.Values{"csrf": {h.csrf}, "error_class": {"GatewayTimeout"},
			"upto": {fmt.Sprint(w.gatewayTimeout[2])}, "count": {"3"}})
		require.Equal(t, http.StatusOK, r.status, r.body)
		// the filter is applied as each batch runs: the raced one no longer
		// matches
		require.Contains(t, r.body, `<strong id="acted">2</strong> acted on, <strong id="refused">0</strong> refused, 1 no longer paused when its turn came.`)
		require.Equal(t, "ready", w.state(t, w.gatewayTimeout[0]))
		require.Equal(t, "paused", w.state(t, w.cardDeclined[0]))

		// a retry of the canceled one refuses while its hero has another
		// ongoing workflow of its type
		h.beforeBulkCall = nil
		var workflowType, heroID string
		require.NoError(t, w.pool.QueryRow(w.ctx, "select workflow_type, hero_id from geneva.workflows where id = $1", raced).Scan(&workflowType, &heroID))
		w.create(t, workflowType, heroID)
		r = get(t, h, "/bulk/retry?error_class=GatewayTimeout&state=canceled")
		require.Contains(t, r.body, `<strong id="bulk-count">1</strong> workflow matches the filter and is paused, or finished`)
		r = post(t, h, "/bulk/retry", url.Values{"csrf": {h.csrf}, "error_class": {"GatewayTimeout"}, "state": {"canceled"},
			"upto": {fmt.Sprint(raced)}, "count": {"1"}})
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `<strong id="acted">0</strong> acted on, <strong id="refused">1</strong> refused`)
		require.Contains(t, r.body, "<td>hero Customer "+heroID+" already has an ongoing "+workflowType+" workflow. Workflow was canceled. Finish or cancel the other one first.")
		require.Contains(t, r.body, fmt.Sprintf(`<a href="/workflows/%d">%d</a>`, raced, raced))
	})

	t.Run("StopsAtTheLimitAndGoesOn", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		h := w.newHandler(t, &Config{BulkBatchSize: 2, BulkLimit: 3})
		r := get(t, h, "/bulk/cancel?state=paused")
		require.Contains(t, r.body, `<strong id="bulk-count">5</strong>`)
		require.Contains(t, r.body, "the oldest 3 in this request")
		upto := regexp.MustCompile(`name="upto" value="(\d+)"`).FindStringSubmatch(r.body)[1]
		r = post(t, h, "/bulk/cancel", url.Values{"csrf": {h.csrf}, "state": {"paused"}, "upto": {upto}, "count": {"5"}})
		require.Contains(t, r.body, `<strong id="acted">3</strong> acted on, <strong id="refused">0</strong> refused.`)
		require.Contains(t, r.body, "<strong>2</strong> more still match")
		next := regexp.MustCompile(`id="bulk-continue" href="([^"]+)"`).FindStringSubmatch(r.body)
		require.NotNil(t, next)
		require.Equal(t, "/bulk/cancel?state=paused&amp;upto="+upto, next[1])

		r = get(t, h, "/bulk/cancel?state=paused&upto="+upto)
		require.Contains(t, r.body, `<strong id="bulk-count">2</strong>`)
		r = post(t, h, "/bulk/cancel", url.Values{"csrf": {h.csrf}, "state": {"paused"}, "upto": {upto}, "count": {"2"}})
		require.Contains(t, r.body, `<strong id="acted">2</strong> acted on`)
		require.NotContains(t, r.body, "more still match")
		for _, id := range append(w.gatewayTimeout, w.cardDeclined...) {
			require.Equal(t, "canceled", w.state(t, id))
		}
	})

	// The page counts with the filter it then acts with (the one workflow
	// filter: goclient.CountWorkflows, then BulkWorkflows), so that every
	// workflow counted is acted on or refused, for every key the page takes.
	t.Run("ActsOnWhatItCounted", func(t *testing.T) {
		t.Parallel()
		for _, action := range []string{"resume", "cancel", "retry"} {
			w := newWorld(t)
			h := w.newHandler(t, &Config{BulkBatchSize: 2})
			for _, query := range []string{
				"type=Payment", "state=paused", "state=ongoing", "state=canceled", "error_class=GatewayTimeout",
				"error_class=CardDeclined&state=paused", "hero=Customer:gw-a", "hero=gw-b",
				"type=Onboarding&state=ready", "created_after=2000-01-01&created_before=2100-01-01", "",
			} {
				r := get(t, h, "/bulk/"+action+"?"+query)
				require.Equal(t, http.StatusOK, r.status, r.body)
				count := regexp.MustCompile(`<strong id="bulk-count">(\d+)</strong>`).FindStringSubmatch(r.body)
				if count == nil {
					require.Contains(t, r.body, "No workflow matching the filter", action+" "+query)
					continue
				}
				upto := regexp.MustCompile(`name="upto" value="(\d+)"`).FindStringSubmatch(r.body)
				require.NotNil(t, upto, action+" "+query)
				form, err := url.ParseQuery(query)
				require.NoError(t, err)
				form.Set("csrf", h.csrf)
				form.Set("upto", upto[1])
				form.Set("count", count[1])
				r = post(t, h, "/bulk/"+action, form)
				require.Equal(t, http.StatusOK, r.status, r.body)
				done := regexp.MustCompile(`<strong id="acted">(\d+)</strong> acted on, <strong id="refused">(\d+)</strong> refused`).FindStringSubmatch(r.body)
				require.NotNil(t, done, r.body)
				acted, _ := strconv.Atoi(done[1])
				refused, _ := strconv.Atoi(done[2])
				require.Equal(t, count[1], strconv.Itoa(acted+refused), action+" "+query)
				require.NotContains(t, r.body, "when its turn came", action+" "+query)
			}
		}
	})

	t.Run("NothingToDo", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		h := w.newHandler(t, nil)
		r := get(t, h, "/bulk/resume?state=finished")
		require.Equal(t, http.StatusOK, r.status)
		require.Contains(t, r.body, "No workflow matching the filter is paused")
		r = post(t, h, "/bulk/resume", url.Values{"csrf": {h.csrf}, "state": {"finished"}})
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Equal(t, http.StatusNotFound, get(t, h, "/bulk/skip").status)
	})
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, &Config{ReadOnly: true})
	id := w.gatewayTimeout[0]

	r := get(t, h, fmt.Sprint("/workflows/", id))
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, `<span class="badge">read-only</span>`)
	require.NotContains(t, r.body, `id="action-`)
	require.NotContains(t, get(t, h, "/workflows").body, `id="bulk-`)

	for _, path := range []string{fmt.Sprintf("/workflows/%d/resume", id), "/bulk/resume?state=paused"} {
		r = get(t, h, path)
		require.Equal(t, http.StatusForbidden, r.status, path)
		require.Contains(t, r.body, "read-only")
	}
	r = post(t, h, fmt.Sprintf("/workflows/%d/resume", id), url.Values{"csrf": {h.csrf}})
	require.Equal(t, http.StatusForbidden, r.status)
	r = post(t, h, "/bulk/resume", url.Values{"csrf": {h.csrf}, "state": {"paused"}, "upto": {"999999"}})
	require.Equal(t, http.StatusForbidden, r.status)
	require.Equal(t, "paused", w.state(t, id))
}

func TestAuthPrefixMetrics(t *testing.T) {
	t.Parallel()
	w := newWorld(t)

	t.Run("Token", func(t *testing.T) {
		h := w.newHandler(t, &Config{Token: "s3cret"})
		require.Equal(t, http.StatusUnauthorized, get(t, h, "/").status)
		require.Equal(t, http.StatusUnauthorized, get(t, h, "/?token=wrong").status)

		r := get(t, h, "/workflows?state=paused&token=s3cret")
		require.Equal(t, http.StatusSeeOther, r.status)
		require.Equal(t, "/workflows?state=paused", r.header.Get("Location"))
		cookie := r.header.Get("Set-Cookie")
		require.Contains(t, cookie, tokenCookie+"=s3cret")
		require.Contains(t, cookie, "HttpOnly")

		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Cookie", tokenCookie+"=s3cret")
		require.Equal(t, http.StatusOK, do(t, h, req).status)
		req = httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		require.Equal(t, http.StatusOK, do(t, h, req).status)
	})

	t.Run("BasicAuth", func(t *testing.T) {
		h := w.newHandler(t, &Config{BasicAuthUser: "ops", BasicAuthPassword: "pw"})
		r := get(t, h, "/")
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.Contains(t, r.header.Get("WWW-Authenticate"), "Basic")
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.SetBasicAuth("ops", "wrong")
		require.Equal(t, http.StatusUnauthorized, do(t, h, req).status)
		req.SetBasicAuth("ops", "pw")
		require.Equal(t, http.StatusOK, do(t, h, req).status)
	})

	t.Run("PrefixAndMetrics", func(t *testing.T) {
		metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "geneva_steps_total 7\n") })
		h := w.newHandler(t, &Config{Prefix: "/ops/geneva/", Metrics: metrics})
		mux := http.NewServeMux()
		mux.Handle("/ops/geneva/", h)
		r := get(t, mux, "/ops/geneva/")
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `href="/ops/geneva/workflows?type=Payment"`)
		require.Contains(t, r.body, `src="/ops/geneva/assets/htmx.min.js"`)
		require.Equal(t, http.StatusOK, get(t, mux, "/ops/geneva/assets/htmx.min.js").status)
		require.Equal(t, http.StatusOK, get(t, mux, fmt.Sprint("/ops/geneva/workflows/", w.finished[0])).status)
		r = get(t, mux, "/ops/geneva/metrics")
		require.Equal(t, "geneva_steps_total 7\n", r.body)
		require.Equal(t, http.StatusNotFound, get(t, w.newHandler(t, nil), "/metrics").status)

		r = post(t, mux, fmt.Sprintf("/ops/geneva/workflows/%d/pause", w.ready[0]), url.Values{"csrf": {h.csrf}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		require.Equal(t, fmt.Sprintf("/ops/geneva/workflows/%d?done=pause", w.ready[0]), r.header.Get("Location"))
	})
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:8080", "localhost:0", "127.0.0.2:80"} {
		require.NoError(t, CheckAddr(addr, nil), addr)
	}
	for _, addr := range []string{":8080", "0.0.0.0:8080", "192.168.1.5:8080", "example.com:80"} {
		err := CheckAddr(addr, &Config{})
		require.ErrorContains(t, err, "not a loopback address", addr)
		require.NoError(t, CheckAddr(addr, &Config{Token: "t"}), addr)
		require.NoError(t, CheckAddr(addr, &Config{BasicAuthUser: "u", BasicAuthPassword: "p"}), addr)
	}
	require.Error(t, CheckAddr("nonsense", nil))
}

func TestListenAndServe(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ListenAndServe(ctx, w.pool, "127.0.0.1:0", nil, func(u string) { urls <- u })
	}()
	u := <-urls
	resp, err := http.Get(u + "paused")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	require.NoError(t, <-done)

	require.ErrorContains(t, ListenAndServe(context.Background(), w.pool, "0.0.0.0:0", nil, nil), "not a loopback address")
}

func TestHumanDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[string]string{
		"0s": "0", "850us": "850µs", "12.34ms": "12.3ms", "4.567s": "4.57s", "3m12s": "3m12s",
		"2h5m": "2h05m", "76h": "3d04h", "-1.5s": "-1.50s",
	} {
		dd, err := time.ParseDuration(d)
		require.NoError(t, err)
		require.Equal(t, want, humanDuration(dd), d)
	}
}

func TestThroughputChart(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	chart := string(throughputChart([]*throughput{
		{Minute: now, Outcome: "success", Executions: 30},
		{Minute: now, Outcome: "paused_by_exception", Executions: 3},
		{Minute: now.Add(-10 * time.Minute), Outcome: "reattempted_by_exception", Executions: 7},
		{Minute: now.Add(-2 * time.Hour), Outcome: "success", Executions: 1000}, // outside the hour
	}, now))
	require.Contains(t, chart, "<title>12:00 UTC: 30 succeeded</title>")
	require.Contains(t, chart, "<title>12:00 UTC: 3 paused</title>")
	require.Contains(t, chart, "<title>11:50 UTC: 7 reattempted</title>")
	require.NotContains(t, chart, "1000")
	require.Contains(t, chart, `text-anchor="end">50</text>`) // the scale: 33 rounds up to 50
	require.Contains(t, chart, `text-anchor="end">12:00</text>`)
	require.Contains(t, chart, `text-anchor="start">11:01</text>`)
}

func TestWorkflowStandings(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, nil)

	t.Run("PerformingWithAPauseRequested", func(t *testing.T) {
		id := w.ready[0]
		var executionID int64
		require.NoError(t, w.pool.QueryRow(w.ctx, "select id from geneva.step_history($1)", id).Scan(&executionID))
		w.exec(t, "select from geneva.start_step($1)", executionID)
		r := get(t, h, fmt.Sprint("/workflows/", id))
		require.Contains(t, r.body, `class="standing-running"><span class="step">welcome</span>`)
		require.Contains(t, r.body, `id="action-pause"`)
		require.Contains(t, r.body, `id="action-cancel"`)
		require.NotContains(t, r.body, `id="action-skip"`)

		require.Equal(t, http.StatusSeeOther, post(t, h, fmt.Sprintf("/workflows/%d/pause", id), url.Values{"csrf": {h.csrf}}).status)
		r = get(t, h, fmt.Sprint("/workflows/", id))
		require.Contains(t, r.body, "(pause requested at the step boundary)")
		require.Equal(t, "performing", w.state(t, id))
		// resume withdraws the request
		require.Contains(t, r.body, `id="action-resume"`)
		require.NotContains(t, r.body, `id="action-pause"`)
		require.Equal(t, http.StatusSeeOther, post(t, h, fmt.Sprintf("/workflows/%d/resume", id), url.Values{"csrf": {h.csrf}}).status)
		r = get(t, h, fmt.Sprint("/workflows/", id))
		require.NotContains(t, r.body, "requested at the step boundary")
		require.Contains(t, r.body, `id="action-pause"`)
	})

	t.Run("StepNoLongerDefined", func(t *testing.T) {
		w.exec(t, `select geneva.define_workflow('Ghost', '{"steps": [{"name": "x"}, {"name": "y"}]}')`)
		id := w.create(t, "Ghost", "boo")
		w.step(t, id, "")
		w.exec(t, `select geneva.define_workflow('Ghost', '{"steps": [{"name": "y"}, {"name": "z"}]}')`)
		r := get(t, h, fmt.Sprint("/workflows/", id))
		require.Regexp(t, `(?s)class="standing-next"><span class="step">y</span>.*class="standing-pending"><span class="step">z</span>.*class="standing-no-longer-defined"><span class="step">x</span>`, r.body)
	})
}

// The unfiltered Workflows page leads with what an operator looks at first:
// the paused workflows, those an error paused first, before the newest of
// every workflow (issue 47).
func TestWorkflowsLeadWithAttention(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, &Config{PageSize: 4})
	w.exec(t, "select geneva.pause_workflow($1)", w.ready[0]) // by an operator: no error
	attention := func(body string) []string {
		var list []string
		for _, m := range regexp.MustCompile(`<td class="num id"><a href="/workflows/(\d+)">`).FindAllStringSubmatch(body, -1) {
			list = append(list, m[1])
		}
		return list
	}

	r := get(t, h, "/workflows")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `<h2 id="attention-heading">Needs attention: 6 paused</h2>`)
	require.Equal(t, ids(w.cardDeclined[1], w.cardDeclined[0], w.gatewayTimeout[2], w.gatewayTimeout[1], w.gatewayTimeout[0], w.ready[0]),
		attention(r.body), "failing first, newest first")
	require.Less(t, strings.Index(r.body, `id="attention"`), strings.Index(r.body, `<table class="list">`), "before the list")
	require.Contains(t, r.body, "<code>CardDeclined</code> in authorize: <span class=\"msg\">the gateway said: CardDeclined</span>")
	require.Len(t, rowsOf(r.body), 4, "the list, a page")

	// a filter, or the next page, is the operator's choice: the list alone
	for _, path := range []string{"/workflows?type=Payment", "/workflows?before=" + fmt.Sprint(w.canceled)} {
		r = get(t, h, path)
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Empty(t, attention(r.body), path)
		require.NotContains(t, r.body, "Needs attention", path)
	}

	// more paused than the section shows: it says so and links them all
	small := w.newHandler(t, nil)
	for i := range maxAttention {
		id := w.create(t, "Onboarding", fmt.Sprint("many-", i))
		w.exec(t, "select geneva.pause_workflow($1)", id)
	}
	r = get(t, small, "/workflows")
	require.Len(t, attention(r.body), maxAttention)
	require.Contains(t, r.body, fmt.Sprintf("Needs attention: %d paused", maxAttention+6))
	require.Contains(t, r.body, `those an error paused first; <a href="/paused">all of them, by error class</a>`)
	require.Equal(t, ids(w.cardDeclined[1], w.cardDeclined[0]), attention(r.body)[:2], "failing first")
}

// A parent's page links its children (their counts by state, each the list
// filtered by parent and state), a child's page its parent and root, and the
// list filtered by parent lists the children.
func TestWorkflowChildrenLinks(t *testing.T) {
	t.Parallel()
	w := &world{ctx: context.Background(), pool: dbtest.NewPool(t)}
	w.exec(t, `select geneva.define_workflow('Run', '{"steps": [{"name": "fan"}]}')`)
	w.exec(t, `select geneva.define_workflow('Item', '{"steps": [{"name": "work"}]}')`)
	root := w.create(t, "Run", "r")
	var parent int64
	require.NoError(t, w.pool.QueryRow(w.ctx,
		"select geneva.create_workflow('Run', 'Customer', 'p', p_parent_id => $1)", root).Scan(&parent))
	var children []int64
	require.NoError(t, w.pool.QueryRow(w.ctx,
		"select geneva.create_workflows('Item', 'Customer', array['1', '2', '3'], p_parent_id => $1)", parent).Scan(&children))
	w.exec(t, "select geneva.cancel_workflow($1)", children[0])
	h := w.newHandler(t, nil)

	r := get(t, h, fmt.Sprintf("/workflows/%d", parent))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, fmt.Sprintf(`<dd id="workflow-parent"><a href="/workflows/%d">workflow %d</a></dd>`, root, root))
	require.Contains(t, r.body, fmt.Sprintf(`<a href="/workflows?parent=%d">3</a>, 1 ended:`, parent))
	require.Contains(t, r.body, fmt.Sprintf(`href="/workflows?parent=%d&amp;state=ready"><span class="state ready">ready</span> 2</a>`, parent))
	require.Contains(t, r.body, fmt.Sprintf(`href="/workflows?parent=%d&amp;state=canceled"><span class="state canceled">canceled</span> 1</a>`, parent))

	r = get(t, h, fmt.Sprintf("/workflows/%d", children[1]))
	require.Contains(t, r.body, fmt.Sprintf(`<a href="/workflows/%d">workflow %d</a> (root: <a href="/workflows/%d">workflow %d</a>)`, parent, parent, root, root))

	r = get(t, h, fmt.Sprintf("/workflows?parent=%d&state=ready", parent))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Equal(t, ids(children[2], children[1]), rowsOf(r.body))
	require.Contains(t, r.body, fmt.Sprintf(`<input name="parent" value="%d"`, parent))
	require.Contains(t, r.body, fmt.Sprintf(`href="/bulk/cancel?parent=%d&amp;state=ready"`, parent))
	r = get(t, h, "/workflows")
	require.Contains(t, r.body, fmt.Sprintf(`<a class="dim" href="/workflows?parent=%d">(1/3 children ended)</a>`, parent))
	r = get(t, h, "/workflows?parent=x")
	require.Equal(t, http.StatusBadRequest, r.status)
}
