package dashboard

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserRunaways opens Stuck from the navigation: no runaway chain;
// housekeeping flags one, and the live page shows it; its link opens the
// workflow's page.
func TestBrowserRunaways(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	t.Parallel()
	w := newWorld(t)
	poll := addRunaway(t, w, "r1")
	h := w.newHandler(t, &Config{RefreshInterval: time.Second})
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)

	b := newBrowser(t, server.URL)
	b.run("overview", chromedp.Navigate(server.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#paused-count")))
	b.run("stuck", chromedp.Click(chromedp.CSS(`nav a[href="/stuck"]`)), chromedp.WaitVisible(chromedp.CSS("#runaways")))
	require.Equal(t, "/stuck", b.location())
	require.Contains(t, b.text("#runaways"), "No runaway chains.")

	w.exec(t, "select geneva.housekeep()")
	count := func() int {
		return value(b, "count runaways", chromedp.Evaluate[int](`document.querySelectorAll("#runaway-list tbody tr").length`))
	}
	b.settle(func() bool { return count() == 1 })
	require.Equal(t, 1, count())
	cells := value(b, "cells", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#runaway-list tbody td")).map(td => td.innerText.trim())`))
	require.Equal(t, []string{fmt.Sprint(poll), "Poll", "Customer r1", "ready", "3", "poll", "3"}, cells[:7])

	b.run("the workflow's page", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#runaway-list a[href="/workflows/%d"]`, poll))),
		chromedp.WaitVisible(chromedp.CSS("#workflow-state")))
	require.Equal(t, fmt.Sprintf("/workflows/%d", poll), b.location())
}
