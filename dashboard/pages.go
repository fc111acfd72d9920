package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/geneva-dev/geneva/goclient"
)

// page is what every template receives.
type page struct {
	Title    string
	Nav      string // the navigation entry to highlight
	Prefix   string
	CSRF     string
	ReadOnly bool
	// Refresh is the live region's polling interval in seconds (0: none).
	Refresh int
	// Self is the page's own URL, which the live region polls.
	Self   string
	Notice string
	Error  string
	Data   any
	// Cells: the dashboard reads a cells' router (docs/cells.md), and the
	// lists of rows show each row's cell
	Cells bool
}

func (h *handler) newPage(r *http.Request, title, nav string, data any) *page {
	p := &page{
		Title: title, Nav: nav, Prefix: h.cfg.Prefix, CSRF: h.csrf, ReadOnly: h.cfg.ReadOnly,
		Self: r.URL.RequestURI(), Data: data, Cells: h.onRouter(r.Context()),
	}
	if h.cfg.RefreshInterval > 0 {
		p.Refresh = max(1, int(h.cfg.RefreshInterval/time.Second))
	}
	return p
}

func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	t, ok := h.templates[name]
	if !ok {
		panic("dashboard: no template " + name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		h.logger.ErrorContext(r.Context(), "dashboard: rendering", "template", name, "error", err)
		http.Error(w, "the page could not be rendered: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// fail renders an error page with the error's sentence.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	if status >= 500 {
		h.logger.ErrorContext(r.Context(), "dashboard: request failed", "path", r.URL.Path, "error", err)
	}
	p := h.newPage(r, http.StatusText(status), "", nil)
	p.Refresh = 0
	p.Error = sentence(err)
	h.render(w, r, status, "error", p)
}

// failQuery renders a failed read: 404 for what does not exist, 400 for a
// bad argument, else 500.
func (h *handler) failQuery(w http.ResponseWriter, r *http.Request, err error) {
	h.fail(w, r, statusOf(err), err)
}

func statusOf(err error) int {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return http.StatusNotFound
	case errors.As(err, &pgErr):
		switch {
		case pgErr.Code == "P0002":
			return http.StatusNotFound
		case pgErr.Code == "55000" || pgErr.Code == "23505":
			return http.StatusConflict
		case strings.HasPrefix(pgErr.Code, "22"):
			return http.StatusBadRequest
		case pgErr.Code == "42501":
			return http.StatusForbidden
		}
	case errors.Is(err, context.Canceled):
		return 499
	}
	return http.StatusInternalServerError
}

// sentence is what a person reads for err: a PostgreSQL error's message,
// detail and hint (e.g. "workflow 7 cannot be canceled. Workflow is
// finished. Finished and canceled workflows cannot be canceled."), never a
// stack.
func sentence(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		var b strings.Builder
		b.WriteString(pgErr.Message)
		for _, more := range []string{pgErr.Detail, pgErr.Hint} {
			if more != "" {
				if !strings.HasSuffix(b.String(), ".") {
					b.WriteString(".")
				}
				b.WriteString(" " + more)
			}
		}
		return b.String()
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return "not found"
	}
	return err.Error()
}

// overviewData is the Overview page.
type overviewData struct {
	Types     []string
	States    []string
	Counts    map[string]map[string]int64
	Totals    map[string]int64
	Total     int64
	Paused    int64
	Stuck     int64
	Waiting   int64
	Chart     template.HTML
	Ended     int64
	QueueLags []*queueLag
	// Cells are each cell's counts, through a cells' router
	Cells []*cellCounts
}

func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d := &overviewData{States: states, Counts: map[string]map[string]int64{}, Totals: map[string]int64{}}
	counts, err := h.workflowCounts(ctx)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	for _, c := range counts {
		if d.Counts[c.WorkflowType] == nil {
			d.Counts[c.WorkflowType] = map[string]int64{}
			d.Types = append(d.Types, c.WorkflowType)
		}
		d.Counts[c.WorkflowType][string(c.State)] = c.Workflows
		d.Totals[string(c.State)] += c.Workflows
		d.Total += c.Workflows
	}
	d.Paused = d.Totals["paused"]
	if d.Stuck, err = h.stuckCount(ctx); err != nil {
		h.failQuery(w, r, err)
		return
	}
	if d.Waiting, err = h.client.CountAwaitingEvents(ctx, nil); err != nil {
		h.failQuery(w, r, err)
		return
	}
	points, now, err := h.throughput(ctx)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	for _, p := range points {
		d.Ended += p.Executions
	}
	d.Chart = throughputChart(points, now)
	if d.QueueLags, err = h.queueLags(ctx); err != nil {
		h.failQuery(w, r, err)
		return
	}
	if h.onRouter(ctx) {
		if d.Cells, err = h.cellsCounts(ctx); err != nil {
			h.failQuery(w, r, err)
			return
		}
	}
	h.render(w, r, http.StatusOK, "overview", h.newPage(r, "Overview", "overview", d))
}

// workflowsData is the Workflows page.
type workflowsData struct {
	Filter *filter
	// Query is the filter as a query string (a URL fragment, so that the
	// template does not escape its = and &)
	Query     template.URL
	States    []string
	Workflows []*goclient.ListedWorkflow
	// ErrorClasses are suggestions for the error class filter.
	ErrorClasses []string
	Next         string // the next page's URL, if any
	First        bool
	// Attention leads the unfiltered list's first page: what an operator
	// looks at first, the paused workflows (those an error paused first),
	// the newest maxAttention of Paused.
	Attention []*goclient.PausedWorkflow
	Paused    int64
}

// maxAttention bounds the paused workflows that lead the Workflows page.
const maxAttention = 20

func (h *handler) workflows(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := parseFilter(q.Get)
	d := &workflowsData{Filter: f, Query: template.URL(f.query()), States: states, First: f.Before == 0}
	if err != nil {
		p := h.newPage(r, "Workflows", "workflows", d)
		p.Error = err.Error()
		p.Refresh = 0
		h.render(w, r, http.StatusBadRequest, "workflows", p)
		return
	}
	if d.ErrorClasses, err = h.errorClasses(r.Context()); err != nil {
		h.failQuery(w, r, err)
		return
	}
	list, more, err := h.listWorkflows(r.Context(), f)
	if err != nil {
		p := h.newPage(r, "Workflows", "workflows", d)
		p.Error = sentence(err)
		h.render(w, r, statusOf(err), "workflows", p)
		return
	}
	d.Workflows = list
	if f.Empty() && d.First {
		if d.Attention, d.Paused, err = h.attention(r.Context()); err != nil {
			h.failQuery(w, r, err)
			return
		}
	}
	if more {
		next := f.query()
		if next != "" {
			next += "&"
		}
		d.Next = h.cfg.Prefix + "/workflows?" + next + "before=" + strconv.FormatInt(list[len(list)-1].ID, 10)
	}
	h.render(w, r, http.StatusOK, "workflows", h.newPage(r, "Workflows", "workflows", d))
}

// attention returns the paused workflows that lead the Workflows page, those
// an error paused (failing) first, then the newest first, and how many are
// paused in all.
func (h *handler) attention(ctx context.Context) ([]*goclient.PausedWorkflow, int64, error) {
	counts, err := h.workflowCounts(ctx)
	if err != nil {
		return nil, 0, err
	}
	var paused int64
	for _, c := range counts {
		if c.State == goclient.StatePaused {
			paused += c.Workflows
		}
	}
	if paused == 0 {
		return nil, 0, nil
	}
	list, err := h.client.PausedWorkflows(ctx, &goclient.PausedWorkflowsParams{Limit: maxAttention, ErrorsFirst: true})
	return list, paused, err
}

// stepStanding is a step of a workflow's definition and where the workflow
// stands with it.
type stepStanding struct {
	Position int
	Name     string
	Wait     time.Duration
	// Standing: done, skipped, running, next, failed, pending, canceled, or
	// "no longer defined" for a step the definition no longer has.
	Standing   string
	Executions int
	Last       *execution
}

// workflowData is the Workflow page.
type workflowData struct {
	Workflow  *goclient.Workflow
	Steps     []*stepStanding
	Timeline  []*execution
	Total     int
	Actions   []string
	StepNames []string
	// Awaiting is the event its step awaits, if it awaits one; SendEvent,
	// whether the workflow is ongoing (an event may be sent to it).
	Awaiting  *waitingRow
	SendEvent bool
	// Blockers say why its step has not started, when it is ready
	// (geneva.workflow_blockers; an awaited event is Awaiting's).
	Blockers []*blockerRow
	// Retries are the workflows that retry this one; ActionLog, the
	// operators' actions on it, newest first (Actions are the buttons).
	Retries   []int64
	ActionLog []*goclient.Action
	// HTTPURLs are the endpoints of its HTTP steps, by step name.
	HTTPURLs map[string]string
	// Resumable: an execution of the timeline has a cursor or continues
	// another (the cursor column); Received: one received an event (the
	// event column).
	Resumable bool
	Received  bool
	// FinalStepIn is the workflow's FinalStepAt relative to now ("in 3
	// days", "5s ago"; geneva.final_step_at).
	FinalStepIn string
	// ChildCounts count its children by state (geneva.workflow_children),
	// when it has children.
	ChildCounts []goclient.ChildCount
}

func (h *handler) workflow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		h.fail(w, r, http.StatusNotFound, fmt.Errorf("%q is not a workflow id", r.PathValue("id")))
		return
	}
	d, err := h.loadWorkflow(ctx, id)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	p := h.newPage(r, fmt.Sprintf("Workflow %d", id), "workflows", d)
	p.Notice = notices[r.URL.Query().Get("done")]
	h.render(w, r, http.StatusOK, "workflow", p)
}

func (h *handler) loadWorkflow(ctx context.Context, id int64) (*workflowData, error) {
	wf, err := h.getWorkflow(ctx, id)
	if err != nil {
		return nil, err
	}
	timeline, total, err := h.stepHistory(ctx, id)
	if err != nil {
		return nil, err
	}
	defined, err := h.definitionSteps(ctx, wf.WorkflowType)
	if err != nil {
		return nil, err
	}
	d := &workflowData{Workflow: wf, Timeline: timeline, Total: total, Actions: allowedActions(wf),
		FinalStepIn: fromNow(wf.FinalStepAt, time.Now())}
	if len(timeline) > 0 {
		events, err := h.receivedEvents(ctx, id, timeline[0].ID)
		if err != nil {
			return nil, err
		}
		for _, e := range timeline {
			e.Event = events[e.ID]
			d.Received = d.Received || e.Event != nil
			d.Resumable = d.Resumable || hasJSON(e.Cursor) || e.ContinuesFromID != nil
		}
	}
	for _, s := range defined {
		d.StepNames = append(d.StepNames, s.StepName)
		if s.HTTPURL != nil {
			if d.HTTPURLs == nil {
				d.HTTPURLs = map[string]string{}
			}
			d.HTTPURLs[s.StepName] = *s.HTTPURL
		}
	}
	d.Steps = standings(wf, defined, timeline)
	if wf.Children > 0 {
		if d.ChildCounts, err = h.client.ChildCounts(ctx, id); err != nil {
			return nil, err
		}
	}
	if d.Retries, err = h.client.Retries(ctx, id); err != nil {
		return nil, err
	}
	if d.ActionLog, err = h.client.ActionLog(ctx, &goclient.ActionLogParams{WorkflowID: id, Limit: 50}); err != nil {
		return nil, err
	}
	d.SendEvent = wf.State == goclient.StateReady || wf.State == goclient.StatePerforming || wf.State == goclient.StatePaused
	if d.SendEvent {
		awaiting, err := h.client.AwaitingEvents(ctx, &goclient.AwaitingEventsParams{WorkflowID: id, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(awaiting) > 0 {
			d.Awaiting = newWaitingRow(awaiting[0], time.Now())
		}
	}
	if wf.State == goclient.StateReady {
		if d.Blockers, err = h.blockers(ctx, &goclient.WorkflowBlockersParams{WorkflowID: id}); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// standings places the workflow on its definition's steps.
func standings(wf *goclient.Workflow, defined []*goclient.DefinitionStep, timeline []*execution) []*stepStanding {
	byName := map[string]*stepStanding{}
	var steps []*stepStanding
	for _, s := range defined {
		st := &stepStanding{Position: s.Position, Name: s.StepName, Wait: s.Wait, Standing: "pending"}
		byName[s.StepName] = st
		steps = append(steps, st)
	}
	for _, e := range timeline {
		st := byName[e.StepName]
		if st == nil {
			st = &stepStanding{Name: e.StepName, Standing: "no longer defined"}
			byName[e.StepName] = st
			steps = append(steps, st)
		}
		st.Executions++
		st.Last = e
	}
	ongoing := wf.State == goclient.StateReady || wf.State == goclient.StatePerforming || wf.State == goclient.StatePaused
	here := ""
	if ongoing {
		here = deref(wf.NextStepName)
		if wf.CurrentStepName != nil {
			here = *wf.CurrentStepName
		}
	}
	for _, st := range steps {
		if st.Standing == "no longer defined" {
			continue
		}
		switch {
		case st.Name == here && wf.State == goclient.StatePerforming:
			st.Standing = "running"
		case st.Name == here && wf.State == goclient.StatePaused:
			st.Standing = "paused here"
		case st.Name == here:
			st.Standing = "next"
		case st.Last == nil:
			st.Standing = "pending"
		default:
			switch st.Last.State {
			case goclient.ExecutionCompleted:
				st.Standing = "done"
			default:
				st.Standing = string(st.Last.State)
			}
		}
	}
	return steps
}

// allowedActions are the verbs the workflow's state allows (SQL decides in
// the end; these are the buttons shown).
func allowedActions(wf *goclient.Workflow) []string {
	switch wf.State {
	case goclient.StateReady:
		return []string{"pause", "cancel", "skip", "run-now"}
	case goclient.StatePerforming:
		switch deref(wf.RequestedAction) {
		case goclient.RequestedCancel, goclient.RequestedCancelByEvent:
			return nil
		case goclient.RequestedPause:
			return []string{"resume", "cancel"} // resume withdraws the request
		}
		return []string{"pause", "cancel"}
	case goclient.StatePaused:
		return []string{"resume", "cancel", "skip", "run-now", "retry"}
	case goclient.StateFinished, goclient.StateCanceled:
		return []string{"retry"}
	}
	return nil
}

// pausedData is the Paused page.
type pausedData struct {
	Groups []*pausedGroup
	Paused []*goclient.PausedWorkflow
	Total  int64
	Max    int
}

func (h *handler) paused(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	groups, err := h.pausedGroups(ctx)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	list, err := h.pausedWorkflows(ctx)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	d := &pausedData{Groups: groups, Max: maxPaused}
	for _, g := range groups {
		d.Total += g.Workflows
	}
	// grouped by error class, the largest group first
	order := map[string]int{}
	for i, g := range groups {
		order[deref(g.ErrorClass)] = i
	}
	slices.SortStableFunc(list, func(a, b *goclient.PausedWorkflow) int {
		return cmp.Compare(order[deref(a.LastErrorClass)], order[deref(b.LastErrorClass)])
	})
	d.Paused = list
	h.render(w, r, http.StatusOK, "paused", h.newPage(r, "Paused", "paused", d))
}

// stuckData is the Stuck page.
type stuckData struct {
	InProgressAfter string
	ScheduledAfter  string
	// SettingInProgress and SettingScheduled are the housekeeping settings'
	// thresholds, the view's when the page is given none; SettingRound is
	// their round interval, how often housekeeping looks; SettingActions how
	// long the action log is kept (and its floor)
	SettingInProgress string
	SettingScheduled  string
	SettingRound      string
	SettingActions    string
	// SettingHistory says how ended workflows leave the live tables: moved
	// into history after move_after, in partitions of partition_interval,
	// dropped or detached after retention (docs/history.md)
	SettingHistory string
	Stuck          []*goclient.StuckExecution
	Total          int64
	Max            int
	// Unserved are the executions due on a queue no worker serves
	// (geneva.workflow_blockers' reason "queue"), at most Max.
	Unserved []*blockerRow
	// Runaways are the workflows housekeeping flagged as runaway chains
	// (geneva.runaway_workflows, at most Max), past RunawayExecutions
	// executions or RunawayRepeats of one step in a row (the settings)
	Runaways          []*goclient.RunawayWorkflow
	RunawayExecutions int
	RunawayRepeats    int
}

// historySetting says what housekeeping does with ended workflows, for
// people: "moved to history 1h after they end, kept 30 days in partitions
// of 1 day, then dropped".
func historySetting(settings *goclient.HousekeepingSettings) string {
	kept := "kept forever"
	if settings.Retention != nil {
		kept = "kept " + humanDuration(*settings.Retention)
	}
	fate := "dropped"
	if settings.Archive == goclient.ArchiveDetach {
		fate = "detached for geneva archive"
	}
	if settings.Retention == nil {
		fate = "never dropped"
	}
	return fmt.Sprintf("moved to history %s after they end, %s in partitions of %s, then %s",
		humanDuration(settings.MoveAfter), kept, humanDuration(settings.PartitionInterval), fate)
}

func (h *handler) stuck(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := &stuckData{InProgressAfter: strings.TrimSpace(q.Get("in_progress_after")),
		ScheduledAfter: strings.TrimSpace(q.Get("scheduled_after")), Max: maxStuck}
	settings, err := h.client.HousekeepingSettings(r.Context())
	if err == nil {
		d.SettingInProgress = humanDuration(settings.StuckInProgressAfter)
		d.SettingScheduled = humanDuration(settings.StuckScheduledAfter)
		d.SettingRound = humanDuration(settings.RoundInterval)
		d.SettingActions = humanDuration(settings.ActionRetention) + ", at least " + humanDuration(settings.ActionRetentionFloor)
		d.SettingHistory = historySetting(settings)
		d.RunawayExecutions, d.RunawayRepeats = settings.RunawayExecutions, settings.RunawayRepeats
	}
	var (
		list  []*goclient.StuckExecution
		total int64
	)
	if err == nil {
		list, total, err = h.stuckExecutions(r.Context(), d.InProgressAfter, d.ScheduledAfter)
	}
	if err == nil {
		d.Unserved, err = h.blockers(r.Context(), &goclient.WorkflowBlockersParams{Reason: goclient.BlockerQueue, Limit: maxStuck})
	}
	if err == nil {
		d.Runaways, err = h.client.RunawayWorkflows(r.Context(), maxStuck)
	}
	if err != nil {
		p := h.newPage(r, "Stuck", "stuck", d)
		p.Error = sentence(err)
		p.Refresh = 0
		h.render(w, r, statusOf(err), "stuck", p)
		return
	}
	d.Stuck, d.Total = list, total
	h.render(w, r, http.StatusOK, "stuck", h.newPage(r, "Stuck", "stuck", d))
}

func (h *handler) stats(w http.ResponseWriter, r *http.Request) {
	list, err := h.stepStats(r.Context())
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "stats", h.newPage(r, "Step statistics", "stats", list))
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// sortedOutcomes lists an outcome map, the largest count first.
func sortedOutcomes(m map[goclient.Outcome]int64) []outcomeCount {
	var list []outcomeCount
	for _, k := range slices.Sorted(maps.Keys(m)) {
		list = append(list, outcomeCount{k, m[k]})
	}
	slices.SortStableFunc(list, func(a, b outcomeCount) int { return cmp.Compare(b.Count, a.Count) })
	return list
}

type outcomeCount struct {
	Outcome goclient.Outcome
	Count   int64
}
