package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// findChromium returns the headless browser to drive: $CHROMIUM, else
// Debian's chromium (or Chrome) on the PATH; "" when there is none.
func findChromium() string {
	if path := os.Getenv("CHROMIUM"); path != "" {
		return path
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	return ""
}

// browser is a headless Chromium on the dashboard, which keeps a screenshot
// of each page it checked and writes them out when the test fails.
type browser struct {
	t           *testing.T
	ctx         context.Context
	base        string
	screenshots []screenshot
}

type screenshot struct {
	name string
	png  []byte
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	chromium := findChromium()
	if chromium == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed, and CI=true: the browser test must run in CI (.ci/run installs Debian's chromium package)")
		}
		t.Skip("SKIP: chromium is not installed, so the dashboard's browser test cannot run (apt-get install chromium, or set CHROMIUM to a Chrome binary); it fails instead when CI=true")
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 480),
	)
	ctx, cancelCtx := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	b := &browser{t: t, ctx: ctx, base: base}
	t.Cleanup(func() {
		if t.Failed() {
			b.writeScreenshots()
		}
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	// start the browser now, so that a missing library fails here, clearly
	require.NoError(t, chromedp.Do(ctx), "starting %s", chromium)
	return b
}

// run runs steps, then keeps a screenshot of the page. A live region's
// refresh, or a page still settling, may replace the element the first step
// acts on between finding it and acting ("Could not find node with given
// id"): the step did nothing then, and it is tried again, a few times at
// most, before the others run.
func (b *browser) run(name string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	var err error
	for attempt := 1; len(steps) > 0; attempt++ {
		err = chromedp.Do(b.ctx, steps[0])
		if err != nil && attempt < 5 && staleNode(err) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		break
	}
	if err == nil && len(steps) > 1 {
		err = chromedp.Do(b.ctx, steps[1:]...)
	}
	b.snap(name)
	require.NoError(b.t, err, "browser: %s", name)
}

// staleNode says whether err is the browser's report of a node that was
// replaced after it was found.
func staleNode(err error) bool {
	return strings.Contains(err.Error(), "No node with given id") || strings.Contains(err.Error(), "Could not find node with given id")
}

// value runs an action that returns a value.
func value[T any](b *browser, name string, action chromedp.Action[T]) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, action)
	if err != nil {
		b.snap(name)
	}
	require.NoError(b.t, err, "browser: %s", name)
	return v
}

// snap keeps a screenshot of the page as it is now.
func (b *browser) snap(name string) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(80)); err == nil {
		b.screenshots = append(b.screenshots, screenshot{name, png})
	}
}

// writeScreenshots writes the screenshots to a directory under the system's
// temporary directory that outlives the test, and says where.
func (b *browser) writeScreenshots() {
	dir, err := os.MkdirTemp("", "geneva-dashboard-"+strings.ReplaceAll(b.t.Name(), "/", "-")+"-")
	if err != nil {
		b.t.Logf("screenshots: %v", err)
		return
	}
	for i, s := range b.screenshots {
		name := fmt.Sprintf("%02d-%s.jpg", i+1, strings.Map(func(r rune) rune {
			if r == ' ' || r == '/' {
				return '-'
			}
			return r
		}, s.name))
		_ = os.WriteFile(filepath.Join(dir, name), s.png, 0o644)
	}
	b.t.Logf("screenshots of each page: %s", dir)
}

// text reads an element's text once it is visible. It reads the live
// document in one evaluation: a live region's refresh may replace the
// element between finding a node and reading it, and a node read after
// its swap can come back empty. When the element is gone at that instant
// (mid-swap), it waits for the new one, a few times at most.
func (b *browser) text(sel string) string {
	b.t.Helper()
	quoted, err := json.Marshal(sel)
	require.NoError(b.t, err)
	read := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e === null ? null : e.innerText })()`, quoted)
	for attempt := 1; ; attempt++ {
		b.run("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
		v := value(b, "read "+sel, chromedp.Evaluate[*string](read))
		if v != nil {
			return strings.TrimSpace(*v)
		}
		require.Less(b.t, attempt, 5, "browser: %s keeps disappearing", sel)
		time.Sleep(50 * time.Millisecond)
	}
}

// settle waits, up to 10 seconds, until cond holds: a form's submit has
// loaded its page (the old page's table is visible until it has, and a busy
// machine may take a while).
func (b *browser) settle(cond func() bool) {
	b.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
}

// rows counts the rows of the page's list.
func (b *browser) rows() int {
	b.t.Helper()
	return value(b, "count rows", chromedp.Evaluate[int](`document.querySelectorAll("table.list tbody tr").length`))
}

func (b *browser) location() string {
	b.t.Helper()
	return strings.TrimPrefix(value(b, "location", chromedp.Location()), b.base)
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, &Config{RefreshInterval: time.Second})
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)

	t.Run("FilterByErrorClassThenResumeOne", func(t *testing.T) {
		b := newBrowser(t, server.URL)
		b.run("overview", chromedp.Navigate(server.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#paused-count")))
		require.Equal(t, "5 paused", strings.Join(strings.Fields(b.text("#paused-count")), " "))

		b.run("workflows", chromedp.Click(chromedp.CSS(`nav a[href="/workflows"]`)), chromedp.WaitVisible(chromedp.CSS("#filters")))
		require.Equal(t, 10, b.rows())
		b.run("filter by error class",
			chromedp.SendKeys(chromedp.CSS(`#filters input[name="error_class"]`), "GatewayTimeout"),
			chromedp.Click(chromedp.CSS(`#filters button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`table.list`)),
		)
		b.settle(func() bool { return strings.Contains(b.location(), "error_class=GatewayTimeout") && b.rows() == 3 })
		require.Contains(t, b.location(), "error_class=GatewayTimeout")
		require.Equal(t, 3, b.rows())

		id := w.gatewayTimeout[2] // newest first
		b.run("open the paused workflow", chromedp.Click(chromedp.CSS(`table.list tbody tr:first-child td a`)), chromedp.WaitVisible(chromedp.CSS("#workflow-state")))
		require.Equal(t, fmt.Sprintf("/workflows/%d", id), b.location())
		require.Equal(t, "paused", b.text("#workflow-state"))
		require.Contains(t, b.text("table.timeline"), "GatewayTimeout")
		// a backtrace unfolded stays open while the page refreshes itself
		b.run("unfold the backtrace", chromedp.Click(chromedp.CSS("details.backtrace summary")),
			chromedp.WaitVisible(chromedp.CSS("details.backtrace pre")))
		w.exec(t, "select geneva.create_workflow('Onboarding', 'Customer', 'meanwhile')")
		time.Sleep(2500 * time.Millisecond) // more than two refresh intervals
		require.True(t, value(b, "backtrace open", chromedp.Evaluate[bool](`document.querySelector("details.backtrace").open`)))

		b.run("press Resume", chromedp.Click(chromedp.CSS("#action-resume")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
		require.Contains(t, b.text("form.confirm"), fmt.Sprintf("resume workflow %d?", id))
		b.run("confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS(".notice")))
		require.Equal(t, "Resumed.", b.text(".notice"))
		require.Equal(t, "ready", b.text("#workflow-state"))
		require.Equal(t, "ready", w.state(t, id))
	})

	t.Run("BulkCancelOfAFilteredSet", func(t *testing.T) {
		b := newBrowser(t, server.URL)
		b.run("workflows", chromedp.Navigate(server.URL+"/workflows"), chromedp.WaitVisible(chromedp.CSS("#filters")))
		b.run("filter paused by CardDeclined",
			chromedp.SetValue(chromedp.CSS(`#filters select[name="state"]`), "paused"),
			chromedp.SendKeys(chromedp.CSS(`#filters input[name="error_class"]`), "CardDeclined"),
			chromedp.Click(chromedp.CSS(`#filters button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`table.list`)),
		)
		b.settle(func() bool { return strings.Contains(b.location(), "error_class=CardDeclined") && b.rows() == 2 })
		require.Equal(t, 2, b.rows())
		b.run("press Cancel the ongoing", chromedp.Click(chromedp.CSS("#bulk-cancel")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
		require.Equal(t, "2", b.text("#bulk-count"))
		b.run("confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#bulk-result")))
		require.Equal(t, "2", b.text("#acted"))
		require.Equal(t, "0", b.text("#refused"))
		for _, id := range w.cardDeclined {
			require.Equal(t, "canceled", w.state(t, id))
		}
		b.run("back to the list", chromedp.Click(chromedp.CSS(`#bulk-result a`)), chromedp.WaitVisible(chromedp.CSS("#filters")))
		require.Contains(t, b.text("#live"), "No workflow matches")
	})

	t.Run("RetryFromStep", func(t *testing.T) {
		b := newBrowser(t, server.URL)
		original := w.gatewayTimeout[1] // paused on its error
		b.run("open the paused workflow", chromedp.Navigate(fmt.Sprintf("%s/workflows/%d", server.URL, original)),
			chromedp.WaitVisible(chromedp.CSS("#workflow-state")))
		require.Equal(t, "paused", b.text("#workflow-state"))
		b.run("press Retry from step", chromedp.Click(chromedp.CSS("#action-retry")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
		require.Contains(t, b.text("form.confirm"), fmt.Sprintf("run workflow %d again, as a new workflow, from a step", original))
		b.run("choose capture and confirm",
			chromedp.SetValue(chromedp.CSS(`form.confirm select[name="step"]`), "capture"),
			chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS(".notice")))
		require.Equal(t, "Retried: this is the new run.", b.text(".notice"))
		require.Equal(t, "ready", b.text("#workflow-state"))
		require.Equal(t, fmt.Sprintf("workflow %d", original), b.text("#retried-from"))
		var retry int64
		_, err := fmt.Sscanf(b.location(), "/workflows/%d", &retry)
		require.NoError(t, err, b.location())
		require.NotEqual(t, original, retry)
		require.Contains(t, b.text("table.timeline"), "capture")
		require.NotContains(t, b.text("table.timeline"), "authorize", "its history starts at the step")

		b.run("back to the original", chromedp.Click(chromedp.CSS("#retried-from a")), chromedp.WaitVisible(chromedp.CSS("#retries")))
		require.Equal(t, "canceled", b.text("#workflow-state"))
		require.Equal(t, fmt.Sprintf("workflow %d", retry), strings.TrimSpace(b.text("#retries")))
		log := b.text("#operator-actions")
		require.Contains(t, log, "retry_workflow")
		require.Contains(t, log, "(dashboard)", "the signed-in user (none here: the dashboard)")
		require.Contains(t, log, `"from_step": "capture"`)
	})

	t.Run("BulkRetryOverAFilter", func(t *testing.T) {
		b := newBrowser(t, server.URL)
		b.run("workflows", chromedp.Navigate(server.URL+"/workflows"), chromedp.WaitVisible(chromedp.CSS("#filters")))
		b.run("filter by GatewayTimeout",
			chromedp.SendKeys(chromedp.CSS(`#filters input[name="error_class"]`), "GatewayTimeout"),
			chromedp.Click(chromedp.CSS(`#filters button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`table.list`)),
		)
		b.settle(func() bool { return strings.Contains(b.location(), "error_class=GatewayTimeout") })
		b.run("press Retry the paused", chromedp.Click(chromedp.CSS("#bulk-retry")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
		// of the three: one resumed, one canceled by its retry, one paused
		require.Equal(t, "1", b.text("#bulk-count"))
		b.run("confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#bulk-result")))
		require.Equal(t, "1", b.text("#acted"))
		require.Equal(t, "0", b.text("#refused"))
		require.Equal(t, "canceled", w.state(t, w.gatewayTimeout[0]))

		b.run("the retried workflow's actions", chromedp.Navigate(fmt.Sprintf("%s/workflows/%d", server.URL, w.gatewayTimeout[0])),
			chromedp.WaitVisible(chromedp.CSS("#retries")))
		require.Regexp(t, `retry_workflow \(bulk \d+\)`, b.text("#operator-actions"))
	})

	t.Run("LiveRefreshKeepsFilterAndScroll", func(t *testing.T) {
		b := newBrowser(t, server.URL)
		path := "/workflows?type=Payment"
		b.run("workflows of a type", chromedp.Navigate(server.URL+path), chromedp.WaitVisible(chromedp.CSS("table.list")))
		before := b.rows()
		scrolled := value(b, "scroll", chromedp.Evaluate[float64](`window.scrollTo(0, 120); window.scrollY`))
		require.Positive(t, scrolled, "the page should be taller than the window")

		// a new workflow of the type, and one of another type, appear behind the page
		fresh := w.create(t, "Payment", "fresh")
		w.create(t, "Onboarding", "other")
		b.run("wait for the refresh", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`a[href="/workflows/%d"]`, fresh))))
		require.Equal(t, before+1, b.rows(), "the filter is kept")
		require.Equal(t, path, b.location())
		y := value(b, "scroll position", chromedp.Evaluate[float64](`window.scrollY`))
		require.Equal(t, scrolled, y, "the scroll position is kept")

		// switched off, the page stays as it is
		b.run("switch live off", chromedp.Click(chromedp.CSS("#live-toggle")))
		unseen := w.create(t, "Payment", "unseen")
		time.Sleep(2500 * time.Millisecond) // more than two refresh intervals
		require.Equal(t, before+1, b.rows(), "no refresh while live is off")
		b.run("switch live on", chromedp.Click(chromedp.CSS("#live-toggle")),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`a[href="/workflows/%d"]`, unseen))))
	})
}

// TestBrowserSendEvent opens Waiting, sends an event with a payload that is
// not JSON (refused, nothing sent), then with one that is, and sees the
// workflow leave the list: it no longer awaits, and its event carries the
// payload.
func TestBrowserSendEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	t.Parallel()
	w := newWorld(t)
	a := addAwaiting(t, w)
	h := w.newHandler(t, &Config{RefreshInterval: time.Second})
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	id := a.expenses[0]

	b := newBrowser(t, server.URL)
	b.run("overview", chromedp.Navigate(server.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#paused-count")))
	b.run("waiting", chromedp.Click(chromedp.CSS(`nav a[href="/waiting"]`)), chromedp.WaitVisible(chromedp.CSS("table#waiting")))
	require.Equal(t, "/waiting", b.location())
	require.Equal(t, 3, b.rows())
	row := fmt.Sprintf("tr#w%d", id)
	require.Contains(t, b.text(row), "approved")

	b.run("press Send event", chromedp.Click(chromedp.CSS(row+" a.send-event")), chromedp.WaitVisible(chromedp.CSS("#payload")))
	require.Equal(t, fmt.Sprintf("/workflows/%d/send-event?event=approved&back=waiting", id), b.location())
	require.Contains(t, b.text("form.confirm"), fmt.Sprintf("send this event to workflow %d?", id))
	require.Equal(t, "approved", value(b, "event name", chromedp.Evaluate[string](`document.getElementById("event").value`)))

	b.run("a payload that is not JSON",
		chromedp.SendKeys(chromedp.CSS("#payload"), `{"approved_by": ann}`),
		chromedp.Click(chromedp.CSS("#confirm")),
		chromedp.WaitVisible(chromedp.CSS(".error")),
	)
	require.Contains(t, b.text(".error"), "Nothing was sent: the payload is not JSON")
	require.Empty(t, w.events(t, id))
	require.True(t, w.isAwaiting(t, id))

	require.Equal(t, `{"approved_by": ann}`, value(b, "the payload kept", chromedp.Value(chromedp.CSS("#payload"))))
	// the form's event key: sent twice, the event is recorded once
	key := value(b, "the form's key", chromedp.Evaluate[string](`document.querySelector('input[name="key"]').value`))
	require.True(t, strings.HasPrefix(key, "dashboard-"), key)
	b.run("fix the payload and send",
		chromedp.SetValue(chromedp.CSS("#payload"), `{"approved_by": "ann", "amount": 120}`),
		chromedp.Click(chromedp.CSS("#confirm")),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	require.Equal(t, fmt.Sprintf("Sent approved to workflow %d.", id), b.text(".notice"))
	require.Equal(t, "/waiting?sent="+fmt.Sprint(id)+"&event_sent=approved", b.location())
	b.settle(func() bool { return b.rows() == 2 })
	require.Equal(t, 2, b.rows(), "the workflow left the list")
	require.False(t, value(b, "row gone", chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q) !== null`, row))))
	// in SQL: the workflow no longer awaits, and its event has the payload
	require.False(t, w.isAwaiting(t, id))
	require.Equal(t, []string{`{"amount": 120, "approved_by": "ann"}`}, w.events(t, id))
	var recorded string
	require.NoError(t, w.pool.QueryRow(w.ctx, "select key from geneva.events where workflow_id = $1", id).Scan(&recorded))
	require.Equal(t, key, recorded, "sent with the form's key")
}

// An HTTP step's endpoint shows under its name in the workflow's timeline,
// and a failed reply's status (its error class) and excerpt beside it.
func TestBrowserHTTPStep(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	t.Parallel()
	w := newWorld(t)
	w.exec(t, `select geneva.define_workflow('Hook', '{"steps": [
		{"name": "notify", "http": {"url": "https://hooks.example.com/notify"}}]}')`)
	id := w.create(t, "Hook", "h-1")
	var executionID int64
	require.NoError(t, w.pool.QueryRow(w.ctx,
		"select id from geneva.step_history($1) where state = 'scheduled'", id).Scan(&executionID))
	w.exec(t, "select count(*) from geneva.start_step($1)", executionID)
	w.exec(t, "select geneva.fail_step($1, $2, $3)", executionID,
		[]string{"http.status.503", "http.status.5xx"}, `{"error": "upstream down"}`)

	h := w.newHandler(t, nil)
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	b := newBrowser(t, server.URL)
	b.run("open the workflow", chromedp.Navigate(fmt.Sprintf("%s/workflows/%d", server.URL, id)),
		chromedp.WaitVisible(chromedp.CSS("#workflow-state")))
	row := fmt.Sprintf("tr#e%d", executionID)
	require.Equal(t, "POST https://hooks.example.com/notify", b.text(row+" .http-url"))
	require.Contains(t, b.text(row), `http.status.503 {"error": "upstream down"}`)
	require.Equal(t, "version 1", b.text("#definition-version"))
	// its step failed: paused or ready, its last step can start at the
	// earliest when it does (geneva.final_step_at)
	require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \((in |now|.* ago)`, b.text("#final-step-at"))

	// a new version; the Definitions page shows the current one and the
	// earlier
	w.exec(t, `select geneva.define_workflow('Hook', '{"steps": [
		{"name": "notify", "http": {"url": "https://hooks.example.com/v2/notify"}}, {"name": "archive"}]}')`)
	b.run("definitions", chromedp.Click(chromedp.CSS(`nav a[href="/definitions"]`)), chromedp.WaitVisible(chromedp.CSS("#d-Hook")))
	require.Equal(t, "/definitions", b.location())
	require.Equal(t, "2", b.text("#d-Hook .version"))
	require.Equal(t, "notify", b.text("#d-Hook-1 .step"))
	require.Equal(t, "POST https://hooks.example.com/v2/notify", b.text("#d-Hook-1 .http-url"))
	require.Equal(t, "archive", b.text("#d-Hook-2 .step"))
	require.Equal(t, "v1 (1 ongoing)", b.text("#d-Hook .earlier"), "the workflow started under v1 runs")
	require.Equal(t, "1", b.text("#d-Payment .version"))

	// the workflow follows version 2 now; its link leads to the definition
	b.run("back to the workflow", chromedp.Navigate(fmt.Sprintf("%s/workflows/%d", server.URL, id)),
		chromedp.WaitVisible(chromedp.CSS("#definition-version")))
	require.Equal(t, "version 2 (started under version 1)", b.text("#definition-version"))
	b.run("to its definition", chromedp.Click(chromedp.CSS("#definition-version a")), chromedp.WaitVisible(chromedp.CSS("#d-Hook")))
	require.Equal(t, "/definitions#d-Hook", b.location())
}
