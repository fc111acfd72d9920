package dashboard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// addSchedule creates the schedule "digest" (every minute, Onboarding for
// Team ops) under the test clock three minutes back, and fires it twice:
// the first slot creates a workflow, the second is skipped (the workflow is
// still ongoing). It returns the workflow's id.
func addSchedule(t *testing.T, w *world) int64 {
	t.Helper()
	conn, err := w.pool.Acquire(w.ctx)
	require.NoError(t, err)
	defer conn.Release()
	clock := func(ago string) {
		_, err := conn.Exec(w.ctx, "select set_config('geneva.fake_now', (now() - $1::interval)::text, false)", ago)
		require.NoError(t, err)
	}
	clock("3 minutes")
	_, err = conn.Exec(w.ctx, "select geneva.create_schedule('digest', '* * * * *', 'Onboarding', 'Team', 'ops')")
	require.NoError(t, err)
	clock("2 minutes")
	_, err = conn.Exec(w.ctx, "select geneva.fire_schedules()")
	require.NoError(t, err)
	clock("1 minute")
	_, err = conn.Exec(w.ctx, "select geneva.fire_schedules()")
	require.NoError(t, err)
	_, err = conn.Exec(w.ctx, "reset geneva.fake_now")
	require.NoError(t, err)
	var id int64
	require.NoError(t, conn.QueryRow(w.ctx, "select last_workflow_id from geneva.schedule_list where name = 'digest'").Scan(&id))
	return id
}

func (w *world) schedulePaused(t *testing.T, name string) bool {
	t.Helper()
	var paused bool
	require.NoError(t, w.pool.QueryRow(w.ctx, "select paused from geneva.schedule_list where name = $1", name).Scan(&paused))
	return paused
}

func TestSchedulesPage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := addSchedule(t, w)
	h := w.newHandler(t, nil)

	r := get(t, h, "/schedules")
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, `<code>* * * * *</code>`)
	require.Contains(t, r.body, fmt.Sprintf(`<a href="/workflows/%d">%d</a>`, id, id))
	require.Contains(t, r.body, fmt.Sprintf("hero Team ops has an ongoing Onboarding workflow (%d, ready)", id))
	require.Contains(t, r.body, `<table class="list" id="skipped">`)
	require.Contains(t, r.body, `href="/schedules/digest/pause"`)

	r = get(t, h, "/schedules/digest/pause")
	require.Contains(t, r.body, "Do you want to pause schedule digest?")
	r = post(t, h, "/schedules/digest/pause", url.Values{})
	require.Equal(t, http.StatusForbidden, r.status, "no CSRF token")
	require.False(t, w.schedulePaused(t, "digest"))
	r = post(t, h, "/schedules/digest/pause", url.Values{"csrf": {h.csrf}})
	require.Equal(t, http.StatusSeeOther, r.status)
	require.True(t, w.schedulePaused(t, "digest"))
	r = get(t, h, "/schedules?done=pause&name=digest")
	require.Contains(t, r.body, "Paused schedule digest.")
	require.Contains(t, r.body, `href="/schedules/digest/resume"`)

	require.Equal(t, http.StatusNotFound, get(t, h, "/schedules/nope/pause").status)
	require.Equal(t, http.StatusNotFound, get(t, h, "/schedules/digest/delete").status)

	readOnly := w.newHandler(t, &Config{ReadOnly: true})
	r = get(t, readOnly, "/schedules")
	require.NotContains(t, r.body, `/schedules/digest/resume`)
	require.Equal(t, http.StatusForbidden, post(t, readOnly, "/schedules/digest/resume", url.Values{"csrf": {readOnly.csrf}}).status)
	require.True(t, w.schedulePaused(t, "digest"))
}

// TestBrowserSchedules opens Schedules from the navigation, sees the last
// workflow and the skipped slot with its reason, pauses the schedule (asked
// first) and resumes it.
func TestBrowserSchedules(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	t.Parallel()
	w := newWorld(t)
	id := addSchedule(t, w)
	h := w.newHandler(t, &Config{RefreshInterval: time.Second})
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)

	b := newBrowser(t, server.URL)
	b.run("overview", chromedp.Navigate(server.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#paused-count")))
	b.run("schedules", chromedp.Click(chromedp.CSS(`nav a[href="/schedules"]`)), chromedp.WaitVisible(chromedp.CSS("table#schedules")))
	require.Equal(t, "/schedules", b.location())
	row := b.text(`table#schedules tbody tr[data-name="digest"]`)
	require.Contains(t, row, fmt.Sprint(id))
	require.Contains(t, row, "Onboarding")
	require.Contains(t, b.text("table#skipped"), "has an ongoing Onboarding workflow")

	b.run("press Pause", chromedp.Click(chromedp.CSS(`tr[data-name="digest"] a.pause`)), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	require.Contains(t, b.text("form.confirm"), "Do you want to pause schedule digest?")
	require.False(t, w.schedulePaused(t, "digest"), "asking changes nothing")
	b.run("confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	require.Equal(t, "Paused schedule digest.", b.text(".notice"))
	require.True(t, w.schedulePaused(t, "digest"))
	require.True(t, strings.Contains(b.text(`table#schedules tbody tr[data-name="digest"]`), "paused"))

	b.run("press Resume", chromedp.Click(chromedp.CSS(`tr[data-name="digest"] a.resume`)), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	require.Contains(t, b.text("form.confirm"), "catch-up, latest")
	b.run("confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	require.Equal(t, "Resumed schedule digest.", b.text(".notice"))
	require.False(t, w.schedulePaused(t, "digest"))
}
