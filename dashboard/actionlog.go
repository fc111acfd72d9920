package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/geneva-dev/geneva/goclient"
)

// actionVerbs are the verbs geneva.action_log records (geneva._log_action's
// callers), suggested by the Actions page's filter (TestActionVerbs keeps
// the list whole).
var actionVerbs = []string{
	"archive", "bulk_workflows", "cancel_workflow", "create_schedule", "define_limit", "define_workflow", "delete_schedule", "housekeep",
	"pause_schedule", "pause_workflow", "resume_schedule", "resume_workflow", "retry_workflow", "schedule_step",
	"send_event", "send_hero_event", "set_housekeeping_settings", "skip_step", "track_hero", "untrack_hero",
}

// actionFilter is the Actions page's filter, from its query parameters.
type actionFilter struct {
	Verb, By, Workflow, After, Before string
	params                            goclient.ActionLogParams
}

// parseActionFilter reads the filter; an error says which value is wrong.
func parseActionFilter(q url.Values) (*actionFilter, error) {
	f := &actionFilter{
		Verb: strings.TrimSpace(q.Get("verb")), By: strings.TrimSpace(q.Get("by")),
		Workflow: strings.TrimSpace(q.Get("workflow")),
		After:    strings.TrimSpace(q.Get("after")), Before: strings.TrimSpace(q.Get("before")),
	}
	f.params.Verb, f.params.By = f.Verb, f.By
	var err error
	if f.Workflow != "" {
		if f.params.WorkflowID, err = strconv.ParseInt(f.Workflow, 10, 64); err != nil || f.params.WorkflowID <= 0 {
			return f, fmt.Errorf("workflow: %q is not a workflow id", f.Workflow)
		}
	}
	if f.params.After, err = parseTime(f.After); err != nil {
		return f, fmt.Errorf("after: %w", err)
	}
	if f.params.Before, err = parseTime(f.Before); err != nil {
		return f, fmt.Errorf("before: %w", err)
	}
	if v := q.Get("before_id"); v != "" {
		if f.params.BeforeID, err = strconv.ParseInt(v, 10, 64); err != nil || f.params.BeforeID <= 0 {
			return f, fmt.Errorf("before_id must be an action id, not %q", v)
		}
	}
	return f, nil
}

// query returns the filter's values without paging, for links.
func (f *actionFilter) query() string {
	q := url.Values{}
	for name, value := range map[string]string{"verb": f.Verb, "by": f.By, "workflow": f.Workflow, "after": f.After, "before": f.Before} {
		if value != "" {
			q.Set(name, value)
		}
	}
	return q.Encode()
}

// Empty tells whether nothing is filtered.
func (f *actionFilter) Empty() bool { return f.query() == "" }

// actionsData is the Actions page.
type actionsData struct {
	Filter  *actionFilter
	Verbs   []string
	Actions []*goclient.Action
	// First: the newest page; Newest and Next: the links to the newest
	// page and the next (older) one, if any.
	First        bool
	Newest, Next string
}

// actions lists the operators' actions (geneva.action_log), newest first,
// filtered by verb, operator, workflow and time, a page at a time.
func (h *handler) actions(w http.ResponseWriter, r *http.Request) {
	f, err := parseActionFilter(r.URL.Query())
	d := &actionsData{Filter: f, Verbs: actionVerbs, First: f.params.BeforeID == 0}
	d.Newest = h.cfg.Prefix + "/actions"
	if q := f.query(); q != "" {
		d.Newest += "?" + q
	}
	if err != nil {
		p := h.newPage(r, "Operators' actions", "actions", d)
		p.Error = err.Error()
		p.Refresh = 0
		h.render(w, r, http.StatusBadRequest, "actions", p)
		return
	}
	params := f.params
	params.Limit = h.cfg.PageSize + 1
	list, err := h.client.ActionLog(r.Context(), &params)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	if len(list) > h.cfg.PageSize {
		list = list[:h.cfg.PageSize]
		sep := "?"
		if strings.Contains(d.Newest, "?") {
			sep = "&"
		}
		d.Next = d.Newest + sep + "before_id=" + strconv.FormatInt(list[len(list)-1].ActionID, 10)
	}
	d.Actions = list
	h.render(w, r, http.StatusOK, "actions", h.newPage(r, "Operators' actions", "actions", d))
}
