package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// maxSkipped bounds the Schedules page's list of skipped slots (the newest).
const maxSkipped = 50

// scheduleRow is a schedule with its times relative to now.
type scheduleRow struct {
	*goclient.Schedule
	// NextIn is when it fires next ("in 4m12s"), or how late its due slot
	// is (Late); LastAgo, how long ago it last fired.
	NextIn, LastAgo string
	Late            bool
}

// schedulesData is the Schedules page.
type schedulesData struct {
	Schedules []*scheduleRow
	Skipped   []*goclient.ScheduleFiring
	Max       int
}

// schedules lists the schedules (geneva.schedule_list), each with its
// pause or resume action, and the newest skipped slots and why
// (geneva.schedule_firing_list).
func (h *handler) schedules(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	list, err := h.client.Schedules(ctx)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	d := &schedulesData{Max: maxSkipped}
	now := time.Now()
	for _, s := range list {
		row := &scheduleRow{Schedule: s}
		if d := s.NextFireAt.Sub(now); d > 0 {
			row.NextIn = "in " + wholeSeconds(d)
		} else {
			row.NextIn, row.Late = wholeSeconds(-d)+" ago", !s.Paused && -d >= 5*time.Second
		}
		if s.LastFiredAt != nil {
			row.LastAgo = wholeSeconds(now.Sub(*s.LastSlot)) + " ago"
		}
		d.Schedules = append(d.Schedules, row)
	}
	if d.Skipped, err = h.client.ScheduleFirings(ctx, "", true, maxSkipped); err != nil {
		h.failQuery(w, r, err)
		return
	}
	p := h.newPage(r, "Schedules", "schedules", d)
	if name := r.URL.Query().Get("name"); name != "" {
		switch r.URL.Query().Get("done") {
		case "pause":
			p.Notice = fmt.Sprintf("Paused schedule %s.", name)
		case "resume":
			p.Notice = fmt.Sprintf("Resumed schedule %s.", name)
		}
	}
	h.render(w, r, http.StatusOK, "schedules", p)
}

// scheduleConfirmData is the confirmation of a schedule's pause or resume.
type scheduleConfirmData struct {
	Action, Label string
	Schedule      *goclient.Schedule
}

// scheduleTarget checks a schedule action's request and finds its schedule;
// false after answering when it cannot be done.
func (h *handler) scheduleTarget(w http.ResponseWriter, r *http.Request) (*scheduleConfirmData, bool) {
	action := r.PathValue("action")
	label := map[string]string{"pause": "Pause", "resume": "Resume"}[action]
	if label == "" {
		h.fail(w, r, http.StatusNotFound, fmt.Errorf("there is no schedule action %q", action))
		return nil, false
	}
	if h.cfg.ReadOnly {
		h.fail(w, r, http.StatusForbidden, errors.New("refused: this dashboard is read-only"))
		return nil, false
	}
	list, err := h.client.Schedules(r.Context())
	if err != nil {
		h.failQuery(w, r, err)
		return nil, false
	}
	for _, s := range list {
		if s.Name == r.PathValue("name") {
			return &scheduleConfirmData{Action: action, Label: label, Schedule: s}, true
		}
	}
	h.fail(w, r, http.StatusNotFound, fmt.Errorf("there is no schedule %q", r.PathValue("name")))
	return nil, false
}

// confirmSchedule asks before pausing or resuming a schedule.
func (h *handler) confirmSchedule(w http.ResponseWriter, r *http.Request) {
	d, ok := h.scheduleTarget(w, r)
	if !ok {
		return
	}
	p := h.newPage(r, fmt.Sprintf("Schedule %s: %s", d.Schedule.Name, d.Action), "schedules", d)
	p.Refresh = 0
	h.render(w, r, http.StatusOK, "schedule_confirm", p)
}

// actSchedule pauses or resumes the schedule through goclient
// (geneva.pause_schedule, resume_schedule) and goes back to the list, or
// shows the refusal's sentence.
func (h *handler) actSchedule(w http.ResponseWriter, r *http.Request) {
	d, ok := h.scheduleTarget(w, r)
	if !ok || !h.checkCSRF(w, r) {
		return
	}
	call := (*goclient.Client).PauseSchedule
	if d.Action == "resume" {
		call = (*goclient.Client).ResumeSchedule
	}
	if err := call(goclient.New(h.primary), r.Context(), d.Schedule.Name); err != nil {
		p := h.newPage(r, fmt.Sprintf("Schedule %s: %s", d.Schedule.Name, d.Action), "schedules", d)
		p.Refresh = 0
		p.Error = "Refused: " + sentence(err)
		h.render(w, r, statusOf(err), "schedule_confirm", p)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("%s/schedules?done=%s&name=%s", h.cfg.Prefix, d.Action, url.QueryEscape(d.Schedule.Name)),
		http.StatusSeeOther)
}
