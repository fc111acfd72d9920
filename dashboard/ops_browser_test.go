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

// TestBrowserOperatorPages walks, at 1,280 px, what an operator meets
// first (issue 47): the Workflows page leading with the paused ones, a
// workflow's timeline with the event a step received and a resumable
// step's cursor in columns of their own, the Definitions page saying what
// each step does, and the Actions page, filtered.
func TestBrowserOperatorPages(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	t.Parallel()
	w := newWorld(t)
	wide := addWide(t, w)
	addLimited(t, w)
	h := w.newHandler(t, &Config{RefreshInterval: time.Second})
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	b := newBrowser(t, server.URL)

	// the Workflows page: the paused first, those an error paused
	b.run("overview", chromedp.Navigate(server.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#paused-count")))
	b.run("workflows", chromedp.Click(chromedp.CSS(`nav a[href="/workflows"]`)), chromedp.WaitVisible(chromedp.CSS("table#attention")))
	require.Equal(t, "Needs attention: 5 paused", b.text("#attention-heading"))
	first := b.text("table#attention tbody tr:first-child")
	require.Contains(t, first, fmt.Sprint(w.cardDeclined[1]))
	require.Contains(t, first, "CardDeclined in authorize: the gateway said: CardDeclined")
	require.True(t, value(b, "attention before the list", chromedp.Evaluate[bool](
		`document.querySelector("table#attention").getBoundingClientRect().bottom < document.querySelector("table.list").getBoundingClientRect().top`)))

	// a workflow's timeline: the cursor and the event received under their
	// own headings
	b.run("the wide workflow", chromedp.Navigate(fmt.Sprintf("%s/workflows/%d", server.URL, wide)), chromedp.WaitVisible(chromedp.CSS("table.timeline")))
	headings := value(b, "headings", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table.timeline thead th")).map(th => th.textContent)`))
	require.Equal(t, []string{"execution", "step", "state", "outcome", "scheduled for", "started", "ended", "queue lag", "run time",
		"cursor", "event received", "error"}, headings)
	cell := func(row int, class string) string {
		return b.text(fmt.Sprintf("table.timeline tbody tr:nth-child(%d) td.%s", row, class))
	}
	require.Contains(t, cell(1, "cursor"), `{"lines": 500, "next_page_token": "eyJw`)
	require.Contains(t, cell(2, "cursor"), "continues")
	require.Empty(t, cell(2, "exec-error"), "the cursor is not an error")
	received := cell(3, "event")
	require.Contains(t, received, "customer_approved_the_invoice from ")
	require.Contains(t, received, `{"comment": "Fine by me`)
	b.run("unfold the payload", chromedp.Click(chromedp.CSS("table.timeline tbody tr:nth-child(3) td.event summary")),
		chromedp.WaitVisible(chromedp.CSS("table.timeline tbody tr:nth-child(3) td.event pre")))
	require.Equal(t, `{"comment": "Fine by me, charge the card on file please", "approved_by": "ann.example@customers.example.com"}`,
		b.text("table.timeline tbody tr:nth-child(3) td.event pre"))
	require.Contains(t, cell(4, "exec-error"), "insufficient funds")

	// the Definitions page: what each step does
	b.run("definitions", chromedp.Click(chromedp.CSS(`nav a[href="/definitions"]`)), chromedp.WaitVisible(chromedp.CSS("#d-WideHook")))
	require.Equal(t, "customer_approved_the_invoice (1 day, then run)", b.text("#d-WideHook-2 .await"))
	require.Equal(t, "reattempt (wait 0s, at most 3)", b.text("#d-WideHook-3 .policies"))
	require.Equal(t, "geneva_http", b.text("#d-WideHook-1 .queue"))
	require.Contains(t, b.text("#d-WideHook-1 .http-url"), "POST https://hooks.example.com/api/v2/")
	require.Equal(t, "payments_api", b.text("#d-TenantSync-1 .limits"))
	require.Equal(t, "concurrency: 1 in progress at once per group", b.text("#d-TenantSync .rules"))
	require.Equal(t, "1 day", b.text("#d-Onboarding-2 .wait"))

	// the Actions page, from the navigation, filtered by verb
	b.run("actions", chromedp.Click(chromedp.CSS(`nav a[href="/actions"]`)), chromedp.WaitVisible(chromedp.CSS("table#actions")))
	require.Equal(t, "/actions", b.location())
	all := b.rows()
	require.GreaterOrEqual(t, all, 3, "the definitions, the world's cancel, the event sent")
	b.run("filter by verb",
		chromedp.SendKeys(chromedp.CSS(`#filters input[name="verb"]`), "send_event"),
		chromedp.Click(chromedp.CSS(`#filters button[type="submit"]`)),
	)
	b.settle(func() bool { return strings.Contains(b.location(), "verb=send_event") && b.rows() == 1 })
	require.Equal(t, 1, b.rows())
	row := b.text("table#actions tbody tr")
	require.Contains(t, row, "send_event")
	require.Contains(t, row, fmt.Sprint(wide))
	require.Contains(t, row, `"event": "customer_approved_the_invoice"`)
	b.run("its workflow", chromedp.Click(chromedp.CSS(fmt.Sprintf(`table#actions a[href="/workflows/%d"]`, wide))),
		chromedp.WaitVisible(chromedp.CSS("#workflow-state")))
	require.Equal(t, fmt.Sprintf("/workflows/%d", wide), b.location())
}
