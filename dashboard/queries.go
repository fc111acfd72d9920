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

// Every query here reads Geneva's views and public read functions, never
// its tables, so the dashboard runs with geneva_reader's grants (and
// geneva_operator's for the actions).

// workflowRow is a workflow in a list, with its latest error.
type workflowRow struct {
	ID              int64      `db:"workflow_id"`
	WorkflowType    string     `db:"workflow_type"`
	HeroType        string     `db:"hero_type"`
	HeroID          string     `db:"hero_id"`
	State           string     `db:"state"`
	CurrentStepName *string    `db:"current_step_name"`
	NextStepName    *string    `db:"next_step_name"`
	RequestedAction *string    `db:"requested_action"`
	CreatedAt       time.Time  `db:"created_at"`
	UpdatedAt       time.Time  `db:"updated_at"`
	ErrorClass      *string    `db:"error_class_name"`
	ErrorMessage    *string    `db:"error_message"`
	ErrorStep       *string    `db:"error_step_name"`
	ErrorAt         *time.Time `db:"error_at"`
}

// filter is the Workflows page's filter, from its query parameters.
type filter struct {
	State         string // a state, or "ongoing"
	Type          string
	HeroType      string
	HeroID        string
	ErrorClass    string
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
	for name, dst := range map[string]*int64{"before": &f.Before, "upto": &f.UpTo} {
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
	add("error_class", f.ErrorClass)
	add("created_after", f.CreatedAfterText)
	add("created_before", f.CreatedBeforeText)
	return q.Encode()
}

// Empty tells whether nothing is filtered.
func (f *filter) Empty() bool { return f.query() == "" }

// where builds the FROM and WHERE of a query of the filtered workflows
// (geneva.workflow_list, alias w) and their arguments. Only the filters given
// appear, so each query plans for its own indexes. An error class joins
// geneva.step_errors (alias e) on the workflow's latest error, one row per
// workflow, so that newest first walks step_executions_error_class_name
// backwards and stops at the page's end.
func (f *filter) where(extra ...string) (string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	switch f.State {
	case "":
	case "ongoing":
		conds = append(conds, "w.ongoing")
	default:
		conds = append(conds, "w.state = "+arg(f.State))
	}
	if f.Type != "" {
		conds = append(conds, "w.workflow_type = "+arg(f.Type))
	}
	if f.HeroType != "" {
		conds = append(conds, "w.hero_type = "+arg(f.HeroType))
	}
	if f.HeroID != "" {
		conds = append(conds, "w.hero_id = "+arg(f.HeroID))
	}
	from := "geneva.workflow_list w"
	if f.ErrorClass != "" {
		from = "geneva.step_errors e join geneva.workflow_list w on w.workflow_id = e.workflow_id"
		conds = append(conds, "e.error_class_name = "+arg(f.ErrorClass), "e.latest")
	}
	if f.CreatedAfter != nil {
		conds = append(conds, "w.created_at >= "+arg(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		conds = append(conds, "w.created_at < "+arg(*f.CreatedBefore))
	}
	if f.Before > 0 {
		conds = append(conds, "w.workflow_id < "+arg(f.Before))
	}
	if f.UpTo > 0 {
		conds = append(conds, "w.workflow_id <= "+arg(f.UpTo))
	}
	conds = append(conds, extra...)
	if len(conds) == 0 {
		return from, args
	}
	return from + " where " + strings.Join(conds, " and "), args
}

// listWorkflows returns a page of the filtered workflows, newest first, and
// whether there are more.
func (h *handler) listWorkflows(ctx context.Context, f *filter) ([]*workflowRow, bool, error) {
	where, args := f.where()
	args = append(args, h.cfg.PageSize+1)
	rows, err := h.db.Query(ctx, `
		select w.workflow_id, w.workflow_type, w.hero_type, w.hero_id, w.state, w.current_step_name,
		  w.next_step_name, w.requested_action, w.created_at, w.updated_at,
		  le.error_class_name, le.error_message, le.step_name as error_step_name, le.finished_at as error_at
		from (
		  select w.* from `+where+`
		  order by w.workflow_id desc
		  limit $`+strconv.Itoa(len(args))+`
		) w
		left join lateral (
		  select e.error_class_name, e.error_message, e.step_name, e.finished_at
		  from geneva.step_errors e
		  where e.workflow_id = w.workflow_id
		  order by e.execution_id desc
		  limit 1
		) le on true
		order by w.workflow_id desc`, args...)
	list, err := collect[workflowRow](rows, err)
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
// the filter's suggestions: one index probe per class (a loose scan of
// step_executions_error_class_name), however many executions carry each.
func (h *handler) errorClasses(ctx context.Context) ([]string, error) {
	rows, err := h.db.Query(ctx, `
		with recursive classes as (
		  (select e.error_class_name as name from geneva.step_errors e order by e.error_class_name limit 1)
		  union all
		  select (
		    select e.error_class_name from geneva.step_errors e
		    where e.error_class_name > c.name order by e.error_class_name limit 1
		  )
		  from classes c
		  where c.name is not null
		)
		select name from classes where name is not null limit $1`, maxErrorClasses)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// eligible is the condition on geneva.workflow_list for the workflows a
// bulk action applies to.
var eligible = map[string]string{
	"resume": "w.state = 'paused'",
	"cancel": "w.ongoing",
}

// countEligible counts the filtered workflows a bulk action applies to and
// returns the highest id among them.
func (h *handler) countEligible(ctx context.Context, f *filter, action string) (int64, int64, error) {
	where, args := f.where(eligible[action])
	var count, maxID int64
	err := h.db.QueryRow(ctx, `select count(*), coalesce(max(w.workflow_id), 0) from `+where, args...).
		Scan(&count, &maxID)
	return count, maxID, err
}

// eligibleBatch returns the next limit ids (below before, when set) of the
// filtered workflows a bulk action applies to, newest first.
func (h *handler) eligibleBatch(ctx context.Context, f *filter, action string, before int64, limit int) ([]int64, error) {
	g := *f
	g.Before = before
	where, args := g.where(eligible[action])
	args = append(args, limit)
	rows, err := h.db.Query(ctx, `select w.workflow_id from `+where+
		` order by w.workflow_id desc limit $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

func (h *handler) getWorkflow(ctx context.Context, id int64) (*goclient.Workflow, error) {
	return goclient.New(h.db).GetWorkflow(ctx, id)
}

// execution is a row of geneva.step_history.
type execution struct {
	ID              int64           `db:"id"`
	StepName        string          `db:"step_name"`
	Attempt         int             `db:"attempt"`
	State           string          `db:"state"`
	Outcome         *string         `db:"outcome"`
	ScheduledFor    time.Time       `db:"scheduled_for"`
	StartedAt       *time.Time      `db:"started_at"`
	FinishedAt      *time.Time      `db:"finished_at"`
	ErrorClassName  *string         `db:"error_class_name"`
	ErrorClasses    []string        `db:"error_classes"`
	ErrorMessage    *string         `db:"error_message"`
	ErrorBacktrace  *string         `db:"error_backtrace"`
	JobID           *int64          `db:"job_id"`
	Metadata        json.RawMessage `db:"metadata"`
	Cursor          json.RawMessage `db:"cursor"`
	ContinuesFromID *int64          `db:"continues_from_id"`
	UpdatedAt       time.Time       `db:"updated_at"`
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

// definedStep is a row of geneva.definition_steps.
type definedStep struct {
	Position int            `db:"position"`
	StepName string         `db:"step_name"`
	Wait     *time.Duration `db:"wait"`
	Queue    string         `db:"queue"`
}

func (h *handler) definitionSteps(ctx context.Context, workflowType string) ([]*definedStep, error) {
	rows, err := h.db.Query(ctx, `select position, step_name, wait, queue from geneva.definition_steps
		where workflow_type = $1 order by position`, workflowType)
	return collect[definedStep](rows, err)
}

func (h *handler) workflowCounts(ctx context.Context) ([]*goclient.WorkflowCount, error) {
	return goclient.New(h.db).WorkflowCounts(ctx)
}

// throughput is a row of geneva.step_throughput.
type throughput struct {
	Minute     time.Time `db:"minute"`
	Outcome    string    `db:"outcome"`
	Executions int64     `db:"executions"`
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
}

func (h *handler) queueLags(ctx context.Context) ([]*queueLag, error) {
	rows, err := h.db.Query(ctx, `select queue, due_executions, oldest_scheduled_for, lag, oldest_execution_id
		from geneva.queue_lag order by queue`)
	return collect[queueLag](rows, err)
}

func (h *handler) stuckCount(ctx context.Context) (int64, error) {
	var n int64
	err := h.db.QueryRow(ctx, `select count(*) from geneva.stuck_executions`).Scan(&n)
	return n, err
}

// maxPaused bounds the paused workflows the Paused page lists (the groups
// count them all).
const maxPaused = 1000

func (h *handler) pausedWorkflows(ctx context.Context) ([]*goclient.PausedWorkflow, error) {
	rows, err := h.db.Query(ctx, `select workflow_id, workflow_type, hero_type, hero_id, next_step_name, paused_at,
		paused_for, error_step_name, error_outcome, last_error_class, last_error_message, last_error_at,
		kept_execution_id, kept_scheduled_for, kept_overdue_by, error_classes
		from geneva.paused_workflows order by workflow_id desc limit $1`, maxPaused)
	return collect[goclient.PausedWorkflow](rows, err)
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
// (intervals; empty: the housekeeping settings'), and the number in all.
func (h *handler) stuckExecutions(ctx context.Context, inProgressAfter, scheduledAfter string) ([]*goclient.StuckExecution, int64, error) {
	tx, err := h.db.Begin(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback(ctx)
	// validate them as intervals first, so a typo is the sentence of 22007
	if _, err := tx.Exec(ctx, `select set_config('geneva.stuck_in_progress_after', coalesce($1::interval::text, ''), true),
		set_config('geneva.stuck_scheduled_after', coalesce($2::interval::text, ''), true)`,
		nullIfEmpty(inProgressAfter), nullIfEmpty(scheduledAfter)); err != nil {
		return nil, 0, err
	}
	rows, err := tx.Query(ctx, `select execution_id, workflow_id, workflow_type, hero_type, hero_id, step_name,
		state, scheduled_for, started_at, running_for, silent_for, overdue_by, job_id, count(*) over () as total
		from geneva.stuck_executions order by execution_id limit $1`, maxStuck)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var list []*goclient.StuckExecution
	var total int64
	for rows.Next() {
		s := &goclient.StuckExecution{}
		if err := rows.Scan(&s.ExecutionID, &s.WorkflowID, &s.WorkflowType, &s.HeroType, &s.HeroID, &s.StepName,
			&s.State, &s.ScheduledFor, &s.StartedAt, &s.RunningFor, &s.SilentFor, &s.OverdueBy, &s.JobID, &total); err != nil {
			return nil, 0, err
		}
		list = append(list, s)
	}
	return list, total, rows.Err()
}

func (h *handler) stepStats(ctx context.Context) ([]*goclient.StepStat, error) {
	// steps in their definition's order
	rows, err := h.db.Query(ctx, `select s.workflow_type, s.step_name, s.executions, s.runs, s.outcomes,
		s.queue_lag_p50_seconds, s.queue_lag_p95_seconds, s.run_time_p50_seconds, s.run_time_p95_seconds
		from geneva.step_stats s
		left join geneva.definition_steps d on d.workflow_type = s.workflow_type and d.step_name = s.step_name
		order by s.workflow_type, d.position nulls last, s.step_name`)
	return collect[goclient.StepStat](rows, err)
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
