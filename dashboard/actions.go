package dashboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/geneva-dev/geneva/goclient"
)

// verbs are the actions on one workflow: the goclient method (its SQL
// function), and what the page says. Run-now and retry take the step; retry
// returns the new workflow, which the page goes to.
var verbs = map[string]struct {
	call                  func(c *goclient.Client, ctx context.Context, workflowID int64, step string) (*goclient.Workflow, error)
	label, describe, done string
}{
	"pause":   {byID((*goclient.Client).PauseWorkflow), "Pause", "pause workflow %d (at the end of its running step, if one runs)", "Paused (or, while a step runs, pausing at its end)."},
	"resume":  {byID((*goclient.Client).ResumeWorkflow), "Resume", "resume workflow %d", "Resumed."},
	"cancel":  {byID((*goclient.Client).CancelWorkflow), "Cancel", "cancel workflow %d (at the end of its running step, if one runs)", "Canceled (or, while a step runs, canceling at its end)."},
	"skip":    {byID((*goclient.Client).SkipStep), "Skip step", "skip the step workflow %d would run next", "Skipped its next step."},
	"run-now": {(*goclient.Client).ScheduleStep, "Run now", "run a step of workflow %d now", "Scheduled to run now."},
	"retry":   {retry, "Retry from step…", "run workflow %d again, as a new workflow, from a step (a paused one is canceled)", "Retried: this is the new run."},
}

// retry runs a workflow again from a step (geneva.retry_workflow) and
// returns the new workflow.
func retry(c *goclient.Client, ctx context.Context, workflowID int64, step string) (*goclient.Workflow, error) {
	id, err := c.RetryWorkflow(ctx, workflowID, step)
	if err != nil {
		return nil, err
	}
	return c.GetWorkflow(ctx, id)
}

// byID is a verb of a goclient method that takes only the workflow's id.
func byID(method func(*goclient.Client, context.Context, int64) (*goclient.Workflow, error)) func(*goclient.Client, context.Context, int64, string) (*goclient.Workflow, error) {
	return func(c *goclient.Client, ctx context.Context, workflowID int64, _ string) (*goclient.Workflow, error) {
		return method(c, ctx, workflowID)
	}
}

// notices are the messages after an action, by ?done=.
var notices = func() map[string]string {
	m := map[string]string{}
	for name, v := range verbs {
		m[name] = v.done
	}
	m["send-event"] = "Event sent."
	return m
}()

// bulkVerbs are the actions on a filtered set: the verb of
// geneva.bulk_workflows, and the workflows it applies to (narrow).
var bulkVerbs = map[string]struct {
	verb            goclient.BulkVerb
	label, eligible string
	// narrow narrows a filter to the workflows the action applies to; false
	// when none can match
	narrow func(p *goclient.WorkflowFilter) bool
}{
	"resume": {goclient.BulkResume, "Resume", "paused", func(p *goclient.WorkflowFilter) bool {
		switch p.State {
		case "", goclient.StateOngoing, goclient.StatePaused:
			p.State = goclient.StatePaused
			return true
		}
		return false
	}},
	"cancel": {goclient.BulkCancel, "Cancel", "ongoing (ready, performing or paused)", func(p *goclient.WorkflowFilter) bool {
		switch p.State {
		case "":
			p.State = goclient.StateOngoing
			return true
		case goclient.StateFinished, goclient.StateCanceled:
			return false
		}
		return true
	}},
	// retry: the paused ones, unless the filter names the finished or the
	// canceled
	"retry": {goclient.BulkRetry, "Retry", "paused, or finished or canceled when the filter says so", func(p *goclient.WorkflowFilter) bool {
		switch p.State {
		case goclient.StatePaused, goclient.StateFinished, goclient.StateCanceled:
			return true
		case "", goclient.StateOngoing:
			p.State = goclient.StatePaused
			return true
		}
		return false
	}},
}

// confirmData is the confirmation page of one action.
type confirmData struct {
	Action, Label, Question string
	Workflow                *goclient.Workflow
	StepNames               []string
	Step                    string
}

func (h *handler) actionTarget(w http.ResponseWriter, r *http.Request) (string, int64, bool) {
	action := r.PathValue("action")
	if _, ok := verbs[action]; !ok {
		h.fail(w, r, http.StatusNotFound, fmt.Errorf("there is no action %q", action))
		return "", 0, false
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		h.fail(w, r, http.StatusNotFound, fmt.Errorf("%q is not a workflow id", r.PathValue("id")))
		return "", 0, false
	}
	if h.cfg.ReadOnly {
		h.fail(w, r, http.StatusForbidden, errors.New("refused: this dashboard is read-only"))
		return "", 0, false
	}
	return action, id, true
}

// confirmAction asks before acting on one workflow.
func (h *handler) confirmAction(w http.ResponseWriter, r *http.Request) {
	action, id, ok := h.actionTarget(w, r)
	if !ok {
		return
	}
	d, err := h.confirmData(r.Context(), action, id)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	d.Step = r.URL.Query().Get("step")
	p := h.newPage(r, fmt.Sprintf("Workflow %d: %s", id, strings.ToLower(d.Label)), "workflows", d)
	p.Refresh = 0
	h.render(w, r, http.StatusOK, "confirm", p)
}

func (h *handler) confirmData(ctx context.Context, action string, id int64) (*confirmData, error) {
	wf, err := h.getWorkflow(ctx, id)
	if err != nil {
		return nil, err
	}
	v := verbs[action]
	d := &confirmData{Action: action, Label: v.label, Question: fmt.Sprintf(v.describe, id), Workflow: wf}
	if action == "run-now" || action == "retry" {
		steps, err := h.definitionSteps(ctx, wf.WorkflowType)
		if err != nil {
			return nil, err
		}
		for _, s := range steps {
			d.StepNames = append(d.StepNames, s.StepName)
		}
	}
	return d, nil
}

// act performs one action through goclient (its SQL function) and goes back
// to the workflow, or shows the refusal's sentence.
func (h *handler) act(w http.ResponseWriter, r *http.Request) {
	action, id, ok := h.actionTarget(w, r)
	if !ok || !h.checkCSRF(w, r) {
		return
	}
	ctx := r.Context()
	var wf *goclient.Workflow
	err := h.asActor(ctx, r, func(c *goclient.Client) error {
		var err error
		wf, err = verbs[action].call(c, ctx, id, r.PostFormValue("step"))
		return err
	})
	if err != nil {
		d, loadErr := h.confirmData(ctx, action, id)
		if loadErr != nil {
			h.fail(w, r, statusOf(err), err)
			return
		}
		d.Step = r.PostFormValue("step")
		p := h.newPage(r, fmt.Sprintf("Workflow %d: %s", id, strings.ToLower(d.Label)), "workflows", d)
		p.Refresh = 0
		p.Error = "Refused: " + sentence(err)
		h.render(w, r, statusOf(err), "confirm", p)
		return
	}
	// (retry: the new workflow)
	http.Redirect(w, r, fmt.Sprintf("%s/workflows/%d?done=%s", h.cfg.Prefix, wf.ID, url.QueryEscape(action)), http.StatusSeeOther)
}

// asActor runs f in a transaction of its own whose geneva.actor is the
// signed-in user, so that the action log (geneva.action_log) records who
// acted besides the dashboard's database role: the basic auth name, "token"
// for a token's holder, or none without credentials. The name says
// "dashboard:" first.
func (h *handler) asActor(ctx context.Context, r *http.Request, f func(c *goclient.Client) error) error {
	tx, err := h.primary.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	if _, err := tx.Exec(ctx, "select pg_catalog.set_config('geneva.actor', $1, true)", h.actor(r)); err != nil {
		return err
	}
	if err := f(goclient.New(tx)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// actor names the signed-in user for the action log.
func (h *handler) actor(r *http.Request) string {
	if user, _, ok := r.BasicAuth(); ok && h.cfg.BasicAuthUser != "" && user == h.cfg.BasicAuthUser {
		return "dashboard:" + user
	}
	if h.cfg.Token != "" {
		return "dashboard:token"
	}
	return "dashboard"
}

// bulkData is the confirmation and the result of a bulk action.
type bulkData struct {
	Action, Label, Eligible string
	Filter                  *filter
	Query                   template.URL
	Count, UpTo             int64
	// the result
	Done     bool
	Acted    int
	Refused  []*refusal
	Refusals int
	// Limit is the most one request acts on; Remaining, how many still
	// match after a request stopped there.
	Limit     int
	Remaining int64
}

// refusalSentence is a bulk refusal's message, detail and hint, as
// sentence says a refused action's.
func refusalSentence(r *goclient.BulkRefusal) string {
	var b strings.Builder
	b.WriteString(r.Message)
	for _, more := range []*string{r.Detail, r.Hint} {
		if more != nil && *more != "" {
			if !strings.HasSuffix(b.String(), ".") {
				b.WriteString(".")
			}
			b.WriteString(" " + *more)
		}
	}
	return b.String()
}

// refusal is the workflows a bulk action could not act on for one reason.
type refusal struct {
	Reason    string
	Workflows []int64
	More      int
}

func (h *handler) bulkTarget(w http.ResponseWriter, r *http.Request, get func(string) string) (string, *filter, bool) {
	action := r.PathValue("action")
	if _, ok := bulkVerbs[action]; !ok {
		h.fail(w, r, http.StatusNotFound, fmt.Errorf("there is no bulk action %q", action))
		return "", nil, false
	}
	if h.cfg.ReadOnly {
		h.fail(w, r, http.StatusForbidden, errors.New("refused: this dashboard is read-only"))
		return "", nil, false
	}
	f, err := parseFilter(get)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return "", nil, false
	}
	f.Before = 0
	return action, f, true
}

// confirmBulk counts what a bulk action would act on and asks.
func (h *handler) confirmBulk(w http.ResponseWriter, r *http.Request) {
	action, f, ok := h.bulkTarget(w, r, r.URL.Query().Get)
	if !ok {
		return
	}
	count, upTo, err := h.countEligible(r.Context(), f, action)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	v := bulkVerbs[action]
	d := &bulkData{Action: action, Label: v.label, Eligible: v.eligible, Filter: f, Query: template.URL(f.query()),
		Count: count, UpTo: upTo, Limit: h.cfg.BulkLimit}
	p := h.newPage(r, v.label+" workflows", "workflows", d)
	p.Refresh = 0
	h.render(w, r, http.StatusOK, "bulk", p)
}

// maxRefusedIDs bounds the workflow ids listed per reason of refusal.
const maxRefusedIDs = 20

// actBulk acts on the filtered workflows that were counted (ids up to the
// highest counted), oldest first, a batch at a time, each batch one call of
// geneva.bulk_workflows (goclient.BulkWorkflows) in its own transaction, and
// reports how many it acted on and why the others were refused.
func (h *handler) actBulk(w http.ResponseWriter, r *http.Request) {
	action, f, ok := h.bulkTarget(w, r, r.PostFormValue)
	if !ok || !h.checkCSRF(w, r) {
		return
	}
	if f.UpTo == 0 {
		h.fail(w, r, http.StatusBadRequest, errors.New("nothing to act on: confirm the count first"))
		return
	}
	ctx := r.Context()
	v := bulkVerbs[action]
	d := &bulkData{Action: action, Label: v.label, Eligible: v.eligible, Filter: f, Query: template.URL(f.query()),
		UpTo: f.UpTo, Done: true, Limit: h.cfg.BulkLimit}
	d.Count, _ = strconv.ParseInt(r.PostFormValue("count"), 10, 64)
	filter, some := f.eligible(action) // as countEligible counted it
	reasons := map[string]*refusal{}
	for some {
		batch := min(h.cfg.BulkBatchSize, h.cfg.BulkLimit-d.Acted-d.Refusals)
		if batch == 0 {
			// the limit: say how many are left for the next request
			var err error
			if d.Remaining, _, err = h.countEligible(ctx, f, action); err != nil {
				h.failQuery(w, r, err)
				return
			}
			break
		}
		if h.beforeBulkCall != nil {
			h.beforeBulkCall(ctx)
		}
		var result *goclient.BulkResult
		err := h.asActor(ctx, r, func(c *goclient.Client) error {
			var err error
			result, err = c.BulkWorkflows(ctx, v.verb, filter, batch)
			return err
		})
		if err != nil {
			h.failQuery(w, r, err)
			return
		}
		d.Acted += result.Acted
		for _, refused := range result.Refused {
			// the reason without the workflow's id, to group them
			reason := strings.Replace(refusalSentence(&refused), " "+strconv.FormatInt(refused.WorkflowID, 10)+" ", " ", 1)
			ref := reasons[reason]
			if ref == nil {
				ref = &refusal{Reason: reason}
				reasons[reason] = ref
			}
			if len(ref.Workflows) < maxRefusedIDs {
				ref.Workflows = append(ref.Workflows, refused.WorkflowID)
			} else {
				ref.More++
			}
			d.Refusals++
		}
		if !result.More {
			break
		}
		filter.AfterID = *result.LastID
	}
	for _, ref := range reasons {
		d.Refused = append(d.Refused, ref)
	}
	slices.SortFunc(d.Refused, func(a, b *refusal) int {
		return cmp.Or(cmp.Compare(len(b.Workflows)+b.More, len(a.Workflows)+a.More), cmp.Compare(a.Reason, b.Reason))
	})
	p := h.newPage(r, v.label+" workflows", "workflows", d)
	p.Refresh = 0
	h.render(w, r, http.StatusOK, "bulk", p)
}
