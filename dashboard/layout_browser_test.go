package dashboard

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// addWide adds a workflow whose timeline is as wide as they come: an HTTP
// step with a long endpoint, a resumable step's long cursor, an event with
// a payload, and errors with long words (a URL, a JSON reply, a chain of
// classes) and a backtrace. It returns the workflow's id.
func addWide(t *testing.T, w *world) int64 {
	t.Helper()
	w.exec(t, `select geneva.define_workflow('WideHook', '{"steps": [
		{"name": "collect_every_line_of_the_invoice", "http": {"url": "https://hooks.example.com/api/v2/tenants/acme-corporation/invoices/collect_every_line_of_the_invoice"}},
		{"name": "wait_for_the_customers_approval", "await": {"event": "customer_approved_the_invoice", "timeout": "1 day"}},
		{"name": "charge_the_card", "on_exception": {"action": "reattempt", "wait": 0, "max_reattempts": 3}}]}')`)
	id := w.create(t, "WideHook", "wide-1")
	scheduled := func() int64 {
		var e int64
		require.NoError(t, w.pool.QueryRow(w.ctx, "select id from geneva.step_history($1) where state = 'scheduled'", id).Scan(&e))
		w.exec(t, "select count(*) from geneva.start_step($1)", e)
		return e
	}
	e := scheduled()
	w.exec(t, `select geneva.checkpoint_step($1, '{"next_page_token":"eyJwYWdlIjoyLCJzaXplIjo1MDAsInNvcnQiOiJjcmVhdGVkX2F0In0","lines":500}')`, e)
	w.exec(t, "select geneva.complete_step($1, 'suspend')", e)
	e = scheduled()
	w.exec(t, "select geneva.complete_step($1)", e)
	w.exec(t, `select geneva.send_event($1, 'customer_approved_the_invoice', '{"approved_by":"ann.example@customers.example.com","comment":"Fine by me, charge the card on file please"}')`, id)
	e = scheduled()
	w.exec(t, "select geneva.complete_step($1)", e)
	for range 2 {
		e = scheduled()
		w.exec(t, "select geneva.fail_step($1, $2, $3, $4)", e,
			[]string{"*payments.GatewayRefusedTheChargeError", "*url.Error", "*net.OpError", "*os.SyscallError"},
			`Post "https://payments.example.com/v1/charges/ch_3NqFGb2eZvKYlo2C0a1b2c3d/capture?expand[]=balance_transaction": {"error":{"code":"card_declined","decline_code":"insufficient_funds","message":"Your card has insufficient funds."}}`,
			"goroutine 1 [running]:\nmain.charge(0xc000010000, {0x7ffd5fbff8a0, 0x1a})\n\t/home/build/src/github.com/example/payments/internal/gateway/charge_the_card_with_retries.go:142 +0x1d4")
	}
	return id
}

// TestBrowserLayout checks the pages' layout at 1,280 px wide, an
// operator's laptop (issue 47): no page is wider than the window (the error
// column of a wide timeline stays on screen, wide enough to read), table
// cells do not take the chart legend's colors or sizes, and counts agree
// with their nouns.
func TestBrowserLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	t.Parallel()
	w := newWorld(t)
	wide := addWide(t, w)
	addSchedule(t, w)
	addLimited(t, w)
	h := w.newHandler(t, &Config{RefreshInterval: -1})
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	b := newBrowser(t, server.URL)
	require.Equal(t, 1280, value(b, "window width", chromedp.Evaluate[int](`window.innerWidth`)))

	for _, path := range []string{
		"/", "/workflows", fmt.Sprintf("/workflows/%d", wide), "/paused", "/waiting", "/limits", "/stuck",
		"/schedules", "/stats", "/definitions", "/actions",
	} {
		b.run(path, chromedp.Navigate(server.URL+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
		widths := value(b, "widths of "+path, chromedp.Evaluate[[]int](
			`[document.documentElement.clientWidth, document.documentElement.scrollWidth]`))
		require.LessOrEqual(t, widths[1], widths[0], "%s is wider than the window", path)
	}

	// the wide timeline's error column: on screen, and wide enough to read
	b.run("the wide workflow", chromedp.Navigate(fmt.Sprintf("%s/workflows/%d", server.URL, wide)),
		chromedp.WaitVisible(chromedp.CSS("table.timeline")))
	cells := value(b, "error column", chromedp.Evaluate[[][]float64](`Array.from(document.querySelectorAll(
		"table.timeline th.exec-error, table.timeline td.exec-error")).map(c => [c.getBoundingClientRect().right, c.getBoundingClientRect().width])`))
	require.Len(t, cells, 7, "the header and six executions")
	for _, c := range cells {
		require.LessOrEqual(t, c[0], 1280.0, "the error column's right edge")
		require.GreaterOrEqual(t, c[1], 240.0, "the error column's width")
	}
	require.Contains(t, b.text("table.timeline th.exec-error"), "ERROR")
	require.Contains(t, b.text("table.timeline tbody tr:nth-child(4) td.exec-error"), "insufficient funds")

	// the chart's legend keeps its colored squares; the cells named like
	// its series do not take them: a schedule's last skip is not painted
	// blue, a limit's key is not squeezed to a square
	b.run("overview", chromedp.Navigate(server.URL+"/"), chromedp.WaitVisible(chromedp.CSS(".legend")))
	legend := value(b, "legend keys", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".legend .legend-key")).map(k =>
		Math.round(k.getBoundingClientRect().width) + " " + getComputedStyle(k).backgroundColor)`))
	require.Len(t, legend, 5)
	for _, k := range legend {
		require.NotContains(t, k, "rgba(0, 0, 0, 0)", "a legend key is colored")
		require.Regexp(t, `^1[01] `, k, "a legend key is a small square")
	}
	b.run("schedules", chromedp.Navigate(server.URL+"/schedules"), chromedp.WaitVisible(chromedp.CSS("table#schedules")))
	require.Equal(t, "rgba(0, 0, 0, 0)", value(b, "the last skip's background", chromedp.Evaluate[string](
		`getComputedStyle(document.querySelector("table#schedules td.skip")).backgroundColor`)))
	require.Contains(t, b.text("table#schedules td.skip"), "has an ongoing Onboarding workflow")
	b.run("limits", chromedp.Navigate(server.URL+"/limits"), chromedp.WaitVisible(chromedp.CSS("table#limits")))
	keys := value(b, "the key cells", chromedp.Evaluate[[][]float64](`Array.from(document.querySelectorAll("table#limits td.key")).map(c =>
		[c.getBoundingClientRect().width, c.scrollWidth, c.getBoundingClientRect().height])`))
	require.NotEmpty(t, keys)
	for _, k := range keys {
		require.Greater(t, k[0], 30.0, "a key cell is a column, not a legend's square")
		require.GreaterOrEqual(t, k[0], k[1], "its text fits")
		require.Less(t, k[2], 40.0, "on one line")
	}

	// a count of one agrees with its noun and verbs
	b.run("bulk resume of one", chromedp.Navigate(server.URL+"/bulk/resume?hero=Customer:gw-a"), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	require.Equal(t, "1 workflow matches the filter and is paused. Resume it?",
		strings.Join(strings.Fields(b.text("form.confirm p")), " "))
	require.Equal(t, "Resume 1 workflow", b.text("#confirm"))
	b.run("bulk resume of two", chromedp.Navigate(server.URL+"/bulk/resume?error_class=CardDeclined"), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	require.Equal(t, "2 workflows match the filter and are paused. Resume them?",
		strings.Join(strings.Fields(b.text("form.confirm p")), " "))
}
