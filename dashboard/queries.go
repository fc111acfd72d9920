package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
)

// The dashboard reads and acts through goclient (h.client); the queries here
// are those only its pages need. Every one reads Geneva's views and public
// read functions, never its tables, so the dashboard runs with
// geneva_reader's grants (and geneva_operator's for the actions).

// filter is the Workflows page's filter, from its query parameters.
type filter struct {
	State         string // a state, or "ongoing"
	Type          string
	HeroType      string
	HeroID        string
	Group         string
	ErrorClass    string
	Parent        int64 // the children of this workflow
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	Before        int64 // keyset: ids below this one
	UpTo          int64 // bulk: ids up to this one (those counted)

	// the raw values, to fill the form again
	Hero, CreatedAfterText, CreatedBeforeText string
}

// states are the workflow states, in the order the pages show them.
var states = []string{
	string(goclient.StateReady), string(goclient.StatePerforming), string(goclient.StatePaused),
	string(goclient.StateFinished), string(goclient.StateCanceled),
}

// parseFilter reads a filter from query or form values.
func parseFilter(get func(string) string) (*filter, error) {
	f := &filter{
		State:             strings.TrimSpace(get("state")),
		Type:              strings.TrimSpace(get("type")),
		ErrorClass:        strings.TrimSpace(get("error_class")),
		Hero:              strings.TrimSpace(get("hero")),
		Group:             strings.TrimSpace(get("group")),
		CreatedAfterText:  strings.TrimSpace(get("created_after")),
		CreatedBeforeText: strings.TrimSpace(get("created_before")),
	}
	if f.State != "" && f.State != "ongoing" && !slices.Contains(states, f.State) {
		return f, fmt.Errorf("unknown state %q: use one of %s or ongoing", f.State, strings.Join(states, ", "))
	}
	if f.Hero != "" {
		if heroType, heroID, ok := strings.Cut(f.Hero, ":"); ok {
			f.HeroType, f.HeroID = strings.TrimSpace(heroType), strings.TrimSpace(heroID)
		} else {
			f.HeroID = f.Hero
		}
	}
	var err error
	if f.CreatedAfter, err = parseTime(f.CreatedAfterText); err != nil {
		return f, fmt.Errorf("created after: %w", err)
	}
	if f.CreatedBefore, err = parseTime(f.CreatedBeforeText); err != nil {
		return f, fmt.Errorf("created before: %w", err)
	}
	for name, dst := range map[string]*int64{"before": &f.Before, "upto": &f.UpTo, "parent": &f.Parent} {
		if v := get(name); v != "" {
			if *dst, err = strconv.ParseInt(v, 10, 64); err != nil || *dst <= 0 {
				return f, fmt.Errorf("%s must be a workflow id, not %q", name, v)
			}
		}
	}
	return f, nil
}

// parseTime reads a time as the browser's datetime-local input sends it (in
// UTC), as RFC 3339, or as a date.
func parseTime(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return &t, nil
		}
	}
	return nil, fmt.Errorf("%q is not a time like 2006-01-02T15:04 (UTC)", s)
}

// query returns the filter's values without paging, for links.
func (f *filter) query() string {
	q := url.Values{}
	add := func(name, value string) {
		if value != "" {
			q.Set(name, value)
		}
	}
	add("state", f.State)
	add("type", f.Type)
	add("hero", f.Hero)
	add("group", f.Group)
	add("error_class", f.ErrorClass)
	if f.Parent != 0 {
		add("parent", strconv.FormatInt(f.Parent, 10))
	}
	add("created_after", f.CreatedAfterText)
	add("created_before", f.CreatedBeforeText)
	return q.Encode()
}

// Empty tells whether nothing is filtered.
func (f *filter) Empty() bool { return f.query() == "" }

// workflowFilter is the filter as goclient, the list, the count and the bulk
// actions take it (the one workflow filter, geneva._workflow_filter).
func (f *filter) workflowFilter() *goclient.WorkflowFilter {
	return &goclient.WorkflowFilter{
		WorkflowType: f.Type, State: goclient.WorkflowState(f.State), HeroType: f.HeroType, HeroID: f.HeroID,
		Group: f.Group, ErrorClass: f.ErrorClass, CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore,
		BeforeID: f.Before, UpToID: f.UpTo, ParentID: f.Parent,
	}
}

// listWorkflows returns a page of the filtered workflows, newest first, and
// whether there are more.
func (h *handler) listWorkflows(ctx context.Context, f *filter) ([]*goclient.ListedWorkflow, bool, error) {
	list, err := h.client.ListWorkflows(ctx, f.workflowFilter(), h.cfg.PageSize+1)
	if err != nil {
		return nil, false, err
	}
	more := len(list) > h.cfg.PageSize
	if more {
		list = list[:h.cfg.PageSize]
	}
	return list, more, nil
}

// maxErrorClasses bounds the error classes offered in the filter.
const maxErrorClasses = 100

// errorClasses lists the error classes that executions carry, in order, for
// the filter's suggestions (geneva.error_classes: one index probe per class,
// however many executions carry each; through a cells' router, a few rows
// from each cell, not every cell's whole view once a class).
func (h *handler) errorClasses(ctx context.Context) ([]string, error) {
	rows, err := h.db.Query(ctx, `select geneva.error_classes($1)`, maxErrorClasses)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// eligible is the filter narrowed to the workflows a bulk action applies
// to, up to the highest counted once counted (UpTo): what the action counts
// (countEligible) and then acts on (actBulk); false when none can match.
func (f *filter) eligible(action string) (*goclient.WorkflowFilter, bool) {
	p := f.workflowFilter()
	return p, bulkVerbs[action].narrow(p)
}

// countEligible counts the filtered workflows a bulk action applies to and
// returns the highest id among them.
func (h *handler) countEligible(ctx context.Context, f *filter, action string) (int64, int64, error) {
	p, ok := f.eligible(action)
	if !ok {
		return 0, 0, nil
	}
	count, err := h.client.CountWorkflows(ctx, p)
	if err != nil {
		return 0, 0, err
	}
	return count.Workflows, count.NewestID, nil
}

func (h *handler) getWorkflow(ctx context.Context, id int64) (*goclient.Workflow, error) {
	return h.client.GetWorkflow(ctx, id)
}

// execution is a row of geneva.step_history.
type execution struct {
	ID              int64                   `db:"id"`
	StepName        string                  `db:"step_name"`
	Attempt         int                     `db:"attempt"`
	State           goclient.ExecutionState `db:"state"`
	Outcome         *goclient.Outcome       `db:"outcome"`
	ScheduledFor    time.Time               `db:"scheduled_for"`
	StartedAt       *time.Time              `db:"started_at"`
	FinishedAt      *time.Time              `db:"finished_at"`
	ErrorClassName  *string                 `db:"error_class_name"`
	ErrorClasses    []string                `db:"error_classes"`
	ErrorMessage    *string                 `db:"error_message"`
	ErrorBacktrace  *string                 `db:"error_backtrace"`
	JobID           *int64                  `db:"job_id"`
	Metadata        json.RawMessage         `db:"metadata"`
	Cursor          json.RawMessage         `db:"cursor"`
	ContinuesFromID *int64                  `db:"continues_from_id"`
	UpdatedAt       time.Time               `db:"updated_at"`
	// Event is the event the execution received (from
	// geneva.workflow_timeline); nil when none.
	Event *receivedEvent `db:"-"`
}

// receivedEvent is the event an execution received: its name, its payload
// (the first maxPayload bytes of its text), who sent it and when.
type receivedEvent struct {
	ExecutionID int64     `db:"execution_id"`
	Name        string    `db:"event_name"`
	Payload     *string   `db:"payload"`
	Truncated   bool      `db:"truncated"`
	SentBy      string    `db:"event_sent_by"`
	SentAt      time.Time `db:"event_sent_at"`
}

// maxPayload bounds the bytes of an event's payload a workflow page shows.
const maxPayload = 2000

// receivedEvents reads the events the workflow's executions from id from
// on received (geneva.workflow_timeline).
func (h *handler) receivedEvents(ctx context.Context, workflowID, from int64) (map[int64]*receivedEvent, error) {
	view := "geneva.workflow_timeline"
	if h.onRouter(ctx) { // the one cell the id routes to
		view = "geneva.cell_workflow_timeline($1::bigint)"
	}
	rows, err := h.db.Query(ctx, `select execution_id, event_name, left(event_payload::text, $3) as payload,
		length(event_payload::text) > $3 as truncated, event_sent_by, event_sent_at
		from `+view+`
		where workflow_id = $1 and execution_id >= $2 and event_id is not null`, workflowID, from, maxPayload)
	list, err := collect[receivedEvent](rows, err)
	if err != nil {
		return nil, err
	}
	events := map[int64]*receivedEvent{}
	for _, e := range list {
		events[e.ExecutionID] = e
	}
	return events, nil
}

// QueueLag is how long the execution waited for a worker (nil before it
// started).
func (e *execution) QueueLag() *time.Duration {
	if e.StartedAt == nil {
		return nil
	}
	d := e.StartedAt.Sub(e.ScheduledFor)
	return &d
}

// RunTime is how long it ran (nil unless it started and ended).
func (e *execution) RunTime() *time.Duration {
	if e.StartedAt == nil || e.FinishedAt == nil {
		return nil
	}
	d := e.FinishedAt.Sub(*e.StartedAt)
	return &d
}

// maxTimeline bounds the executions a workflow page shows (the newest).
const maxTimeline = 500

func (h *handler) stepHistory(ctx context.Context, id int64) ([]*execution, int, error) {
	rows, err := h.db.Query(ctx, `select id, step_name, attempt, state, outcome, scheduled_for, started_at,
		finished_at, error_class_name, error_classes, error_message, error_backtrace, job_id, metadata, cursor,
		continues_from_id, updated_at, count(*) over () as total
		from geneva.step_history($1) order by id desc limit $2`, id, maxTimeline)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var list []*execution
	total := 0
	for rows.Next() {
		e := &execution{}
		if err := rows.Scan(&e.ID, &e.StepName, &e.Attempt, &e.State, &e.Outcome, &e.ScheduledFor, &e.StartedAt,
			&e.FinishedAt, &e.ErrorClassName, &e.ErrorClasses, &e.ErrorMessage, &e.ErrorBacktrace, &e.JobID, &e.Metadata, &e.Cursor,
			&e.ContinuesFromID, &e.UpdatedAt, &total); err != nil {
			return nil, 0, err
		}
		list = append(list, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	// oldest first
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return list, total, nil
}

// definitionSteps are the steps of a type's current definition
// (geneva.definition_steps), in run order.
func (h *handler) definitionSteps(ctx context.Context, workflowType string) ([]*goclient.DefinitionStep, error) {
	return h.client.DefinitionSteps(ctx, workflowType)
}

func (h *handler) workflowCounts(ctx context.Context) ([]*goclient.WorkflowCount, error) {
	return h.client.WorkflowCounts(ctx)
}

// throughput is a row of geneva.step_throughput.
type throughput struct {
	Minute     time.Time        `db:"minute"`
	Outcome    goclient.Outcome `db:"outcome"`
	Executions int64            `db:"executions"`
}

func (h *handler) throughput(ctx context.Context) ([]*throughput, time.Time, error) {
	rows, err := h.db.Query(ctx, `select minute, outcome, executions from geneva.step_throughput order by minute`)
	list, err := collect[throughput](rows, err)
	if err != nil {
		return nil, time.Time{}, err
	}
	var now time.Time
	err = h.db.QueryRow(ctx, `select date_trunc('minute', geneva.now())`).Scan(&now)
	return list, now, err
}

// queueLag is a row of geneva.queue_lag.
type queueLag struct {
	Queue              string         `db:"queue"`
	DueExecutions      int64          `db:"due_executions"`
	OldestScheduledFor time.Time      `db:"oldest_scheduled_for"`
	Lag                *time.Duration `db:"lag"`
	OldestExecutionID  int64          `db:"oldest_execution_id"`
	// Cell is the cell's database through a cells' router (a River a
	// cell), else empty.
	Cell string `db:"cell"`
}

func (h *handler) queueLags(ctx context.Context) ([]*queueLag, error) {
	cell := "''"
	if h.onRouter(ctx) {
		cell = "cell"
	}
	rows, err := h.db.Query(ctx, `select queue, due_executions, oldest_scheduled_for, lag, oldest_execution_id, `+cell+` as cell
		from geneva.queue_lag order by queue, cell`)
	return collect[queueLag](rows, err)
}

func (h *handler) stuckCount(ctx context.Context) (int64, error) {
	return h.client.CountStuckExecutions(ctx, nil)
}

// maxPaused bounds the paused workflows the Paused page lists (the groups
// count them all).
const maxPaused = 1000

func (h *handler) pausedWorkflows(ctx context.Context) ([]*goclient.PausedWorkflow, error) {
	return h.client.PausedWorkflows(ctx, &goclient.PausedWorkflowsParams{Limit: maxPaused})
}

// pausedGroup is the paused workflows of one error class (or none).
type pausedGroup struct {
	ErrorClass   *string        `db:"error_class"`
	Workflows    int64          `db:"workflows"`
	Types        string         `db:"types"`
	Example      *string        `db:"example"`
	OldestPaused *time.Duration `db:"oldest_paused"`
}

func (h *handler) pausedGroups(ctx context.Context) ([]*pausedGroup, error) {
	rows, err := h.db.Query(ctx, `select last_error_class as error_class, count(*) as workflows,
		string_agg(distinct workflow_type, ', ') as types, min(last_error_message) as example, max(paused_for) as oldest_paused
		from geneva.paused_workflows group by last_error_class order by count(*) desc, last_error_class`)
	return collect[pausedGroup](rows, err)
}

// maxStuck bounds the stuck executions the Stuck page lists.
const maxStuck = 1000

// stuckExecutions reads geneva.stuck_executions with the given thresholds
// (intervals as PostgreSQL reads them; empty: the housekeeping settings'),
// and the number in all.
func (h *handler) stuckExecutions(ctx context.Context, inProgressAfter, scheduledAfter string) ([]*goclient.StuckExecution, int64, error) {
	p := &goclient.StuckExecutionsParams{Limit: maxStuck}
	// PostgreSQL reads them, so that the page takes what SQL takes and a
	// typo is the sentence of 22007
	if err := h.db.QueryRow(ctx, `select $1::interval, $2::interval`, nullIfEmpty(inProgressAfter), nullIfEmpty(scheduledAfter)).
		Scan(&p.StuckInProgressAfter, &p.StuckScheduledAfter); err != nil {
		return nil, 0, err
	}
	list, err := h.client.StuckExecutions(ctx, p)
	if err != nil || len(list) < maxStuck {
		return list, int64(len(list)), err
	}
	total, err := h.client.CountStuckExecutions(ctx, p)
	return list, total, err
}

func (h *handler) stepStats(ctx context.Context) ([]*goclient.StepStat, error) {
	return h.client.StepStats(ctx, nil)
}

func collect[T any](rows pgx.Rows, err error) ([]*T, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[T])
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
