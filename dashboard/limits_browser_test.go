package dashboard

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserLimits opens Limits from the navigation, reads acme's key
// (its slot held, one waiting), sees the live page follow when acme's
// running step ends and its waiter is passed the slot, then opens the
// waiter's page, which shows its group.
func TestBrowserLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	t.Parallel()
	w := newWorld(t)
	l := addLimited(t, w)
	h := w.newHandler(t, &Config{RefreshInterval: time.Second})
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)

	b := newBrowser(t, server.URL)
	b.run("overview", chromedp.Navigate(server.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#paused-count")))
	b.run("limits", chromedp.Click(chromedp.CSS(`nav a[href="/limits"]`)), chromedp.WaitVisible(chromedp.CSS("table#limits")))
	require.Equal(t, "/limits", b.location())
	require.Equal(t, 3, b.rows(), "TenantSync's acme and globex, payments_api's one key")

	// the row of TenantSync's key acme: in progress, waiting
	cells := func(limit, key string) []string {
		return value(b, "cells of "+key, chromedp.Evaluate[[]string](fmt.Sprintf(`Array.from(document.querySelectorAll("table#limits tbody tr"))
			.filter(tr => tr.cells[0].innerText.trim() === %q && tr.cells[2].innerText.trim() === %q)
			.flatMap(tr => Array.from(tr.cells).map(td => td.innerText.trim()))`, limit, key)))
	}
	acme := cells("TenantSync", "acme")
	require.Len(t, acme, 8)
	require.Equal(t, []string{"TenantSync", "concurrency", "acme", "1 / 1", "1"}, acme[:5])
	require.Equal(t, "2 / 100", cells("payments_api", "—")[6])

	// acme's step ends: the live page shows its waiter holding the slot
	w.exec(t, "select geneva.complete_step(id) from geneva.step_history($1) where state = 'in_progress'", l.acme[0])
	b.settle(func() bool { return strings.Join(cells("TenantSync", "acme")[3:5], ",") == "1 / 1,0" })
	require.Equal(t, []string{"1 / 1", "0"}, cells("TenantSync", "acme")[3:5])

	b.run("the workflow's page", chromedp.Navigate(fmt.Sprintf("%s/workflows/%d", server.URL, l.acme[1])),
		chromedp.WaitVisible(chromedp.CSS("#workflow-group")))
	require.Equal(t, "acme", b.text("#workflow-group"))
}
