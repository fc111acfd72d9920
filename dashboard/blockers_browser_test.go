package dashboard

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserWhyNotStarted reads, at 1,280 px, a waiter's page saying which
// key holds it and its place in line, follows the line's link to the queue
// no worker serves on the Stuck page, and reads a rate-held step counted
// waiting on the Limits page; no page is wider than the window.
func TestBrowserWhyNotStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	t.Parallel()
	w := newWorld(t)
	l := addLimited(t, w)
	addRateHeld(t, w)
	w.reportQueue(t, "default")
	h := w.newHandler(t, &Config{RefreshInterval: -1})
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	b := newBrowser(t, server.URL)
	require.Equal(t, 1280, value(b, "window width", chromedp.Evaluate[int](`window.innerWidth`)))
	fits := func(page string) {
		widths := value(b, "widths of "+page, chromedp.Evaluate[[]int](
			`[document.documentElement.clientWidth, document.documentElement.scrollWidth]`))
		require.LessOrEqual(t, widths[1], widths[0], "%s is wider than the window", page)
	}

	b.run("the waiter's page", chromedp.Navigate(fmt.Sprintf("%s/workflows/%d", server.URL, l.acme[1])),
		chromedp.WaitVisible(chromedp.CSS(`dd.blocker[data-reason="concurrency"]`)))
	require.Equal(t, "held by the concurrency of TenantSync (key acme): 1 in progress of 1, it is 1st of 1 waiting for a slot",
		strings.Join(strings.Fields(b.text(`dd.blocker[data-reason="concurrency"]`)), " "))
	fits("the waiter's page")

	b.run("a page of the mail queue", chromedp.Navigate(fmt.Sprintf("%s/workflows/%d", server.URL, w.ready[0])),
		chromedp.WaitVisible(chromedp.CSS(`dd.blocker[data-reason="queue"]`)))
	require.Contains(t, b.text(`dd.blocker[data-reason="queue"]`), "no worker serves the queue mail: no worker ever reported it")
	b.run("to the Stuck page", chromedp.Click(chromedp.CSS(`dd.blocker a[href="/stuck#unserved"]`)),
		chromedp.WaitVisible(chromedp.CSS("table#unserved-executions")))
	require.Equal(t, "/stuck#unserved", b.location())
	queues := value(b, "the queue cells", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("table#unserved-executions td.queue")).map(td => td.innerText.trim())`))
	require.Equal(t, []string{"mail", "mail"}, queues)
	fits("/stuck")

	b.run("limits", chromedp.Navigate(server.URL+"/limits"), chromedp.WaitVisible(chromedp.CSS("table#limits")))
	call := value(b, "Call's row", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table#limits tbody tr"))
		.filter(tr => tr.cells[0].innerText.trim() === "Call")
		.flatMap(tr => Array.from(tr.cells).map(td => td.innerText.trim()))`))
	require.Len(t, call, 8)
	require.Equal(t, "1", call[4], "the rate-held step waits")
	fits("/limits")
}
