package goclient

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// TimelineEntry is a row of the geneva.workflow_timeline view: one execution
// with its queue lag and run time.
type TimelineEntry struct {
	ExecutionID     int64          `db:"execution_id"`
	StepName        string         `db:"step_name"`
	State           ExecutionState `db:"state"`
	Outcome         *Outcome       `db:"outcome"`
	ScheduledFor    time.Time      `db:"scheduled_for"`
	StartedAt       *time.Time     `db:"started_at"`
	FinishedAt      *time.Time     `db:"finished_at"`
	QueueLag        *time.Duration `db:"queue_lag"`
	RunTime         *time.Duration `db:"run_time"`
	ErrorClassName  *string        `db:"error_class_name"`
	ErrorMessage    *string        `db:"error_message"`
	ReattemptReason *string        `db:"reattempt_reason"`
	// Cursor is where a resumable step's execution got to (its last saved
	// cursor); ContinuesFromID the execution it continues.
	Cursor          json.RawMessage `db:"cursor"`
	ContinuesFromID *int64          `db:"continues_from_id"`
	// ErrorClasses are every class of the error's chain, ErrorClassName
	// first.
	ErrorClasses []string `db:"error_classes"`
	// HTTPURL is an HTTP step's endpoint (the current definition's); nil
	// for a Go step.
	HTTPURL *string `db:"http_url"`
	// EventID is the event the step received (it awaited it), with its
	// name, payload, the login role that sent it and when; nil when it
	// received none. Every attempt of the step carries the same event.
	EventID      *int64          `db:"event_id"`
	EventName    *string         `db:"event_name"`
	EventPayload json.RawMessage `db:"event_payload"`
	EventSentBy  *string         `db:"event_sent_by"`
	EventSentAt  *time.Time      `db:"event_sent_at"`
}

// Timeline returns a workflow's executions in order with their queue lag and
// run time (the geneva.workflow_timeline view).
func (c *Client) Timeline(ctx context.Context, workflowID int64) ([]*TimelineEntry, error) {
	rows, err := c.db.Query(ctx, `select execution_id, step_name, state, outcome, scheduled_for, started_at,
		finished_at, queue_lag, run_time, error_class_name, error_message, reattempt_reason, cursor,
		continues_from_id, error_classes, http_url, event_id, event_name, event_payload, event_sent_by, event_sent_at
		from `+c.oneWorkflow(ctx, "workflow_timeline", "$1")+` where workflow_id = $1 order by execution_id`, workflowID)
	return collect[TimelineEntry](rows, err)
}

// PausedWorkflow is a row of the geneva.paused_workflows view.
type PausedWorkflow struct {
	WorkflowID       int64          `db:"workflow_id"`
	WorkflowType     string         `db:"workflow_type"`
	HeroType         string         `db:"hero_type"`
	HeroID           string         `db:"hero_id"`
	NextStepName     *string        `db:"next_step_name"`
	PausedAt         *time.Time     `db:"paused_at"`
	PausedFor        *time.Duration `db:"paused_for"`
	ErrorStepName    *string        `db:"error_step_name"`
	ErrorOutcome     *Outcome       `db:"error_outcome"`
	LastErrorClass   *string        `db:"last_error_class"`
	LastErrorMessage *string        `db:"last_error_message"`
	LastErrorAt      *time.Time     `db:"last_error_at"`
	KeptExecutionID  *int64         `db:"kept_execution_id"`
	KeptScheduledFor *time.Time     `db:"kept_scheduled_for"`
	KeptOverdueBy    *time.Duration `db:"kept_overdue_by"`
	// ErrorClasses are every class of the error that paused the workflow,
	// LastErrorClass first.
	ErrorClasses []string `db:"error_classes"`

	// Cell is the cell the row comes from (its database's name) when read
	// through a cells' router (docs/cells.md); else empty.
	Cell string `db:"cell" json:",omitempty"`
}

// PausedWorkflowsParams filters PausedWorkflows. A nil
// *PausedWorkflowsParams takes every default.
type PausedWorkflowsParams struct {
	// ErrorsFirst returns the workflows an error paused (LastErrorClass set)
	// before those an operator or a step paused, each newest first.
	//
	// Defaults to false: newest first.
	ErrorsFirst bool

	// Limit is how many to return at most (the first in their order).
	//
	// Defaults to 0: every paused workflow.
	Limit int

	// WorkflowType keeps the paused workflows of this type only.
	//
	// Defaults to every type (empty).
	WorkflowType string
}

// PausedWorkflows returns the paused workflows with why they paused (the
// geneva.paused_workflows view), newest first (those an error paused first,
// with ErrorsFirst).
func (c *Client) PausedWorkflows(ctx context.Context, params *PausedWorkflowsParams) ([]*PausedWorkflow, error) {
	if params == nil {
		params = &PausedWorkflowsParams{}
	}
	rows, err := c.db.Query(ctx, `select workflow_id, workflow_type, hero_type, hero_id, next_step_name, paused_at,
		paused_for, error_step_name, error_outcome, last_error_class, last_error_message, last_error_at,
		kept_execution_id, kept_scheduled_for, kept_overdue_by, error_classes, `+cellColumn("p")+`
		from geneva.paused_workflows p where $1::text is null or workflow_type = $1
		order by $3 and last_error_class is null, workflow_id desc limit $2`,
		nullIfZero(params.WorkflowType), limitOrAll(params.Limit), params.ErrorsFirst)
	return collect[PausedWorkflow](rows, err)
}

// StuckExecution is a row of the geneva.stuck_executions view.
type StuckExecution struct {
	ExecutionID  int64          `db:"execution_id"`
	WorkflowID   int64          `db:"workflow_id"`
	WorkflowType string         `db:"workflow_type"`
	HeroType     string         `db:"hero_type"`
	HeroID       string         `db:"hero_id"`
	StepName     string         `db:"step_name"`
	State        ExecutionState `db:"state"`
	ScheduledFor time.Time      `db:"scheduled_for"`
	StartedAt    *time.Time     `db:"started_at"`
	RunningFor   *time.Duration `db:"running_for"`
	SilentFor    *time.Duration `db:"silent_for"`
	OverdueBy    *time.Duration `db:"overdue_by"`
	JobID        *int64         `db:"job_id"`

	// Cell is the cell the row comes from (its database's name) when read
	// through a cells' router (docs/cells.md); else empty.
	Cell string `db:"cell" json:",omitempty"`
}

// StuckExecutionsParams are the thresholds and the limit of StuckExecutions
// and CountStuckExecutions. A nil *StuckExecutionsParams takes every
// default.
type StuckExecutionsParams struct {
	// Limit is how many to return at most (the oldest executions);
	// CountStuckExecutions counts them all.
	//
	// Defaults to 0: every stuck execution.
	Limit int

	// StuckInProgressAfter is how long an in_progress execution may go
	// without a sign of life before it counts as stuck.
	//
	// Defaults (nil) to the housekeeping settings' (see
	// HousekeepingSettings).
	StuckInProgressAfter *time.Duration

	// StuckScheduledAfter is how long a scheduled execution of a ready
	// workflow may be overdue before it counts as stuck.
	//
	// Defaults (nil) to the housekeeping settings'.
	StuckScheduledAfter *time.Duration
}

// StuckExecutions returns the executions housekeeping would recover as stuck
// (the geneva.stuck_executions view), oldest first: with the thresholds of
// the housekeeping settings, or those params gives.
//
// The view takes other thresholds from settings local to a transaction, so
// with a threshold given the client's DB must begin one (a *pgxpool.Pool, a
// *pgx.Conn, or a pgx.Tx, where it is a savepoint); it is rolled back.
func (c *Client) StuckExecutions(ctx context.Context, params *StuckExecutionsParams) ([]*StuckExecution, error) {
	if params == nil {
		params = &StuckExecutionsParams{}
	}
	var list []*StuckExecution
	err := c.withStuckThresholds(ctx, params, func(db DB) error {
		rows, err := db.Query(ctx, `select execution_id, workflow_id, workflow_type, hero_type, hero_id, step_name,
			state, scheduled_for, started_at, running_for, silent_for, overdue_by, job_id, `+cellColumn("s")+`
			from geneva.stuck_executions s order by execution_id limit $1`, limitOrAll(params.Limit))
		list, err = collect[StuckExecution](rows, err)
		return err
	})
	return list, err
}

// CountStuckExecutions returns how many executions StuckExecutions would
// return without a limit.
func (c *Client) CountStuckExecutions(ctx context.Context, params *StuckExecutionsParams) (int64, error) {
	if params == nil {
		params = &StuckExecutionsParams{}
	}
	var n int64
	err := c.withStuckThresholds(ctx, params, func(db DB) error {
		return mapError(db.QueryRow(ctx, "select count(*) from geneva.stuck_executions").Scan(&n))
	})
	return n, err
}

// RunawayWorkflow is a row of the geneva.runaway_workflows view: an ongoing
// workflow housekeeping flagged as a runaway chain, with its executions now
// and the step that ran most times in a row (Repeats). Flagged, never
// stopped.
type RunawayWorkflow struct {
	WorkflowID   int64         `db:"workflow_id"`
	WorkflowType string        `db:"workflow_type"`
	HeroType     string        `db:"hero_type"`
	HeroID       string        `db:"hero_id"`
	State        WorkflowState `db:"state"`
	Executions   int64         `db:"executions"`
	StepName     string        `db:"step_name"`
	Repeats      int           `db:"repeats"`
	FlaggedAt    time.Time     `db:"flagged_at"`

	// Cell is the cell the row comes from (its database's name) when read
	// through a cells' router (docs/cells.md); else empty.
	Cell string `db:"cell" json:",omitempty"`
}

// RunawayWorkflows returns the ongoing workflows housekeeping flagged as
// runaway chains (the geneva.runaway_workflows view: more executions than
// the setting RunawayExecutions, or one step more than RunawayRepeats times
// in a row), the most executions first; limit 0 returns them all.
func (c *Client) RunawayWorkflows(ctx context.Context, limit int) ([]*RunawayWorkflow, error) {
	rows, err := c.db.Query(ctx, `select workflow_id, workflow_type, hero_type, hero_id, state, executions,
		step_name, repeats, flagged_at, `+cellColumn("r")+`
		from geneva.runaway_workflows r order by executions desc, workflow_id limit $1`, limitOrAll(limit))
	return collect[RunawayWorkflow](rows, err)
}

// withStuckThresholds runs read on the client's DB, or, when params gives a
// threshold, in a transaction where geneva.stuck_executions reads it.
func (c *Client) withStuckThresholds(ctx context.Context, params *StuckExecutionsParams, read func(db DB) error) error {
	if params.StuckInProgressAfter == nil && params.StuckScheduledAfter == nil {
		return read(c.db)
	}
	beginner, ok := c.db.(interface {
		Begin(ctx context.Context) (pgx.Tx, error)
	})
	if !ok {
		return errors.New("geneva: stuck thresholds need a DB that begins transactions")
	}
	tx, err := beginner.Begin(ctx)
	if err != nil {
		return mapError(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // it only reads
	_, err = tx.Exec(ctx, `select set_config('geneva.stuck_in_progress_after', coalesce($1::interval::text, ''), true),
		set_config('geneva.stuck_scheduled_after', coalesce($2::interval::text, ''), true)`,
		params.StuckInProgressAfter, params.StuckScheduledAfter)
	if err != nil {
		return mapError(err)
	}
	return read(tx)
}

// StepStat is a row of the geneva.step_stats view.
type StepStat struct {
	WorkflowType       string            `db:"workflow_type"`
	StepName           string            `db:"step_name"`
	Executions         int64             `db:"executions"`
	Runs               int64             `db:"runs"`
	Outcomes           map[Outcome]int64 `db:"outcomes"`
	QueueLagP50Seconds *float64          `db:"queue_lag_p50_seconds"`
	QueueLagP95Seconds *float64          `db:"queue_lag_p95_seconds"`
	RunTimeP50Seconds  *float64          `db:"run_time_p50_seconds"`
	RunTimeP95Seconds  *float64          `db:"run_time_p95_seconds"`

	// Cell is the cell the row comes from (its database's name) when read
	// through a cells' router (docs/cells.md); else empty.
	Cell string `db:"cell" json:",omitempty"`
}

// StepStatsParams filters StepStats. A nil *StepStatsParams takes every
// default.
type StepStatsParams struct {
	// WorkflowTypes keeps the steps of these workflow types only.
	//
	// Defaults to every type (nil).
	WorkflowTypes []string
}

// StepStats returns, per workflow type and step, the executions that ended
// since the start of the hour 24 hours ago: outcomes, queue lag and run time
// percentiles, within 1% (the geneva.step_stats view). They come by type,
// then in the order of the type's definition (steps it no longer defines
// last, by name).
func (c *Client) StepStats(ctx context.Context, params *StepStatsParams) ([]*StepStat, error) {
	if params == nil {
		params = &StepStatsParams{}
	}
	rows, err := c.db.Query(ctx, `select s.workflow_type, s.step_name, s.executions, s.runs, s.outcomes,
		s.queue_lag_p50_seconds, s.queue_lag_p95_seconds, s.run_time_p50_seconds, s.run_time_p95_seconds, `+cellColumn("s")+`
		from geneva.step_stats s
		left join geneva.definition_steps d on d.workflow_type = s.workflow_type and d.step_name = s.step_name
		where $1::text[] is null or s.workflow_type = any($1)
		order by s.workflow_type, d.position nulls last, s.step_name, cell`, params.WorkflowTypes)
	return collect[StepStat](rows, err)
}

// cellColumn selects a view's cell (as cell) by its alias: through a cells'
// router (docs/cells.md) the views whose rows are each one cell's end with
// the column cell, which one database's views do not have; empty there.
func cellColumn(alias string) string {
	return "coalesce(pg_catalog.to_jsonb(" + alias + ") ->> 'cell', '') as cell"
}

func collect[T any](rows pgx.Rows, err error) ([]*T, error) {
	if err != nil {
		return nil, mapError(err)
	}
	all, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[T])
	return all, mapError(err)
}

// limitOrAll is a LIMIT argument: NULL (no limit) unless limit is positive.
func limitOrAll(limit int) *int {
	if limit <= 0 {
		return nil
	}
	return &limit
}

// BlockerReason says why a ready workflow's scheduled execution has not
// started (WorkflowBlocker.Reason).
type BlockerReason string

// The reasons of geneva.workflow_blockers.
const (
	// BlockerWait: its wait (or backoff) has not passed; HeldUntil is when
	// it is due.
	BlockerWait BlockerReason = "wait"
	// BlockerEvent: it awaits Event, none of which has come; HeldUntil is
	// its timeout.
	BlockerEvent BlockerReason = "event"
	// BlockerConcurrency: it waits for a slot of a concurrency key:
	// InProgress of Concurrency hold one, and it is Position-th of Waiting
	// in the key's line.
	BlockerConcurrency BlockerReason = "concurrency"
	// BlockerRateLimit: a rate window of the key was full at its claim
	// (StartsInWindow of Rate per Per); its start is reserved for the window
	// that begins at HeldUntil.
	BlockerRateLimit BlockerReason = "rate_limit"
	// BlockerQueue: it is due, but no worker serves Queue: none reported it
	// in the last 15 minutes (QueueReportedAt), or it is paused in River
	// (QueuePausedAt). LastFetchedAt is when a worker last fetched a job of
	// the queue.
	BlockerQueue BlockerReason = "queue"
)

// WorkflowBlocker is a row of the geneva.workflow_blockers view: one reason
// why a ready workflow's scheduled execution has not started, with its
// numbers (the fields its reason names; the others are nil).
type WorkflowBlocker struct {
	WorkflowID   int64         `db:"workflow_id"`
	WorkflowType string        `db:"workflow_type"`
	HeroType     string        `db:"hero_type"`
	HeroID       string        `db:"hero_id"`
	ExecutionID  int64         `db:"execution_id"`
	StepName     string        `db:"step_name"`
	ScheduledFor time.Time     `db:"scheduled_for"`
	Reason       BlockerReason `db:"reason"`
	HeldUntil    *time.Time    `db:"held_until"`
	Event        *string       `db:"event"`
	// LimitKind, LimitName and Key name the limit's key as LimitUsage does.
	LimitKind       *LimitKind     `db:"limit_kind"`
	LimitName       *string        `db:"limit_name"`
	Key             *string        `db:"key"`
	InProgress      *int64         `db:"in_progress"`
	Concurrency     *int           `db:"concurrency"`
	Position        *int64         `db:"position"`
	Waiting         *int64         `db:"waiting"`
	StartsInWindow  *int64         `db:"starts_in_window"`
	Rate            *int           `db:"rate"`
	Per             *time.Duration `db:"per"`
	Queue           *string        `db:"queue"`
	QueueReportedAt *time.Time     `db:"queue_reported_at"`
	QueuePausedAt   *time.Time     `db:"queue_paused_at"`
	LastFetchedAt   *time.Time     `db:"last_fetched_at"`
}

// WorkflowBlockersParams filters WorkflowBlockers. A nil
// *WorkflowBlockersParams takes every default.
type WorkflowBlockersParams struct {
	// WorkflowID keeps this workflow's rows only.
	//
	// Defaults to 0: every workflow.
	WorkflowID int64

	// Reason keeps the rows of this reason only.
	//
	// Defaults to every reason (empty).
	Reason BlockerReason

	// Limit is how many rows to return at most (the oldest executions
	// first).
	//
	// Defaults to 0: every one.
	Limit int
}

// WorkflowBlockers returns why ready workflows' scheduled executions have
// not started (the geneva.workflow_blockers view), by execution.
func (c *Client) WorkflowBlockers(ctx context.Context, params *WorkflowBlockersParams) ([]*WorkflowBlocker, error) {
	if params == nil {
		params = &WorkflowBlockersParams{}
	}
	from := "geneva.workflow_blockers"
	if params.WorkflowID != 0 {
		from = c.oneWorkflow(ctx, "workflow_blockers", "$1")
	}
	rows, err := c.db.Query(ctx, `select workflow_id, workflow_type, hero_type, hero_id, execution_id, step_name,
		  scheduled_for, reason, held_until, event, limit_kind, limit_name, key, in_progress, concurrency,
		  position, waiting, starts_in_window, rate, per, queue, queue_reported_at, queue_paused_at, last_fetched_at
		from `+from+`
		where ($1::bigint is null or workflow_id = $1) and ($2::text is null or reason = $2)
		order by execution_id, reason, limit_kind, limit_name, key limit $3`,
		nullIfZero(params.WorkflowID), nullIfZero(string(params.Reason)), limitOrAll(params.Limit))
	return collect[WorkflowBlocker](rows, err)
}
