package dashboard

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// maxWaiting bounds the rows of the Waiting page (those whose timeout comes
// first).
const maxWaiting = 500

// waitingRow is a step awaiting an event, with its times relative to now.
type waitingRow struct {
	*goclient.AwaitingEvent
	// WaitingFor is how long it has waited ("" when its wait has not begun:
	// the step's own wait comes first); Begins, when that wait ends.
	WaitingFor, Begins string
	// TimeoutIn is when the timeout falls: "in 1d23h", or "3m ago" when it
	// is due (the step runs, or its on_timeout applies, when its job does).
	TimeoutIn string
	Overdue   bool
}

func newWaitingRow(a *goclient.AwaitingEvent, now time.Time) *waitingRow {
	row := &waitingRow{AwaitingEvent: a}
	if d := now.Sub(a.WaitingSince); d >= time.Second {
		row.WaitingFor = wholeSeconds(d)
	} else if d >= 0 {
		row.WaitingFor = "under a second"
	} else {
		row.Begins = "in " + wholeSeconds(-d)
	}
	if a.TimeoutAt != nil {
		d := a.TimeoutAt.Sub(now)
		if d > 0 {
			row.TimeoutIn = "in " + wholeSeconds(d)
		} else {
			row.TimeoutIn, row.Overdue = wholeSeconds(-d)+" ago", true
		}
	}
	return row
}

// wholeSeconds is humanDuration to the second: 9s, 3m12s, 2h05m, 3d04h.
func wholeSeconds(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return humanDuration(d)
}

// waitingData is the Waiting page: what waits for which event.
type waitingData struct {
	Type, Event string
	Waiting     []*waitingRow
	Total       int64
	Max         int
}

// waiting lists the steps that await an event (geneva.awaiting_events), the
// soonest timeout first, each with its Send event action.
func (h *handler) waiting(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	d := &waitingData{Type: strings.TrimSpace(q.Get("type")), Event: strings.TrimSpace(q.Get("event")), Max: maxWaiting}
	params := &goclient.AwaitingEventsParams{WorkflowType: d.Type, Event: d.Event, Limit: maxWaiting}
	list, err := h.client.AwaitingEvents(ctx, params)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	if d.Total, err = h.client.CountAwaitingEvents(ctx, params); err != nil {
		h.failQuery(w, r, err)
		return
	}
	now := time.Now()
	for _, a := range list {
		d.Waiting = append(d.Waiting, newWaitingRow(a, now))
	}
	p := h.newPage(r, "Waiting for events", "waiting", d)
	if id, err := strconv.ParseInt(q.Get("sent"), 10, 64); err == nil {
		p.Notice = fmt.Sprintf("Sent %s to workflow %d.", q.Get("event_sent"), id)
	}
	h.render(w, r, http.StatusOK, "waiting", p)
}

// sendEventData is the Send event form: its confirmation.
type sendEventData struct {
	Workflow *goclient.Workflow
	// Awaiting is what the workflow's step awaits, if it awaits an event.
	Awaiting *waitingRow
	Event    string
	Payload  string
	// Key is the form's event key (geneva.send_event's p_key), drawn when
	// the form is shown: the form sent twice (a double click, a reload
	// that posts again) records the event once.
	Key string
	// Back is where to go after: "waiting" (the Waiting page) or the
	// workflow's page.
	Back string
}

func (h *handler) sendEventTarget(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		h.fail(w, r, http.StatusNotFound, fmt.Errorf("%q is not a workflow id", r.PathValue("id")))
		return 0, false
	}
	if h.cfg.ReadOnly {
		h.fail(w, r, http.StatusForbidden, errors.New("refused: this dashboard is read-only"))
		return 0, false
	}
	return id, true
}

func (h *handler) sendEventData(ctx context.Context, id int64, event, payload, back string) (*sendEventData, error) {
	wf, err := h.getWorkflow(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &sendEventData{Workflow: wf, Event: event, Payload: payload, Back: back}
	awaiting, err := h.client.AwaitingEvents(ctx, &goclient.AwaitingEventsParams{WorkflowID: id, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(awaiting) > 0 {
		d.Awaiting = newWaitingRow(awaiting[0], time.Now())
		if d.Event == "" {
			d.Event = awaiting[0].Event
		}
	}
	if d.Back != "waiting" {
		d.Back = ""
	}
	return d, nil
}

// confirmSendEvent shows the Send event form: the event's name (the one
// the workflow awaits, by default) and a JSON payload.
func (h *handler) confirmSendEvent(w http.ResponseWriter, r *http.Request) {
	id, ok := h.sendEventTarget(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	d, err := h.sendEventData(r.Context(), id, strings.TrimSpace(q.Get("event")), "", q.Get("back"))
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	d.Key = "dashboard-" + rand.Text()
	h.renderSendEvent(w, r, http.StatusOK, d, "")
}

func (h *handler) renderSendEvent(w http.ResponseWriter, r *http.Request, status int, d *sendEventData, message string) {
	nav := "workflows"
	if d.Back == "waiting" {
		nav = "waiting"
	}
	p := h.newPage(r, fmt.Sprintf("Workflow %d: send an event", d.Workflow.ID), nav, d)
	p.Refresh = 0
	p.Error = message
	h.render(w, r, status, "send_event", p)
}

// sendEvent sends the event through goclient (geneva.send_event), with the
// form's key, and goes back, or shows the form again with why nothing was
// sent: a payload that is not JSON (nothing is sent), the engine's refusal,
// an ended workflow, or the form sent already (its key recorded).
func (h *handler) sendEvent(w http.ResponseWriter, r *http.Request) {
	id, ok := h.sendEventTarget(w, r)
	if !ok || !h.checkCSRF(w, r) {
		return
	}
	ctx := r.Context()
	event := strings.TrimSpace(r.PostFormValue("event"))
	payload := strings.TrimSpace(r.PostFormValue("payload"))
	back := r.PostFormValue("back")
	key := strings.TrimSpace(r.PostFormValue("key"))
	refuse := func(status int, message string) {
		d, err := h.sendEventData(ctx, id, event, payload, back)
		if err != nil {
			h.fail(w, r, statusOf(err), err)
			return
		}
		d.Event = event
		d.Key = key
		h.renderSendEvent(w, r, status, d, message)
	}
	var send any // no payload: SQL NULL
	if payload != "" {
		var check any
		if err := json.Unmarshal([]byte(payload), &check); err != nil {
			refuse(http.StatusBadRequest, "Nothing was sent: the payload is not JSON ("+err.Error()+"). "+
				`Write JSON, e.g. {"approved_by": "ann"}, "a string" or 42, or leave it empty for none.`)
			return
		}
		send = json.RawMessage(payload)
	}
	var sent bool
	err := h.asActor(ctx, r, func(c *goclient.Client) error {
		var err error
		sent, err = c.SendEvent(ctx, id, event, send, goclient.SendEventOpts{Key: key})
		return err
	})
	if err != nil {
		refuse(statusOf(err), "Refused: "+sentence(err))
		return
	}
	if !sent && key != "" {
		if wf, err := h.client.GetWorkflow(ctx, id); err == nil && wf.State != goclient.StateFinished && wf.State != goclient.StateCanceled {
			refuse(http.StatusConflict, "Nothing was sent: this form was sent already, and its event is recorded once.")
			return
		}
	}
	if !sent {
		refuse(http.StatusConflict, fmt.Sprintf("Nothing was sent: workflow %d has ended.", id))
		return
	}
	target := fmt.Sprintf("%s/workflows/%d?done=send-event", h.cfg.Prefix, id)
	if back == "waiting" {
		target = fmt.Sprintf("%s/waiting?sent=%d&event_sent=%s", h.cfg.Prefix, id, url.QueryEscape(event))
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}
