package goclient

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// TimelineEntry is a row of the geneva.workflow_timeline view: one execution
// with its queue lag and run time.
type TimelineEntry struct {
	ExecutionID     int64          `db:"execution_id"`
	StepName        string         `db:"step_name"`
	State           ExecutionState `db:"state"`
	Outcome         *string        `db:"outcome"`
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
}

// Timeline returns a workflow's executions in order with their queue lag and
// run time (the geneva.workflow_timeline view).
func (c *Client) Timeline(ctx context.Context, workflowID int64) ([]*TimelineEntry, error) {
	rows, err := c.db.Query(ctx, `select execution_id, step_name, state, outcome, scheduled_for, started_at,
		finished_at, queue_lag, run_time, error_class_name, error_message, reattempt_reason, cursor,
		continues_from_id, error_classes
		from geneva.workflow_timeline where workflow_id = $1 order by execution_id`, workflowID)
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
	ErrorOutcome     *string        `db:"error_outcome"`
	LastErrorClass   *string        `db:"last_error_class"`
	LastErrorMessage *string        `db:"last_error_message"`
	LastErrorAt      *time.Time     `db:"last_error_at"`
	KeptExecutionID  *int64         `db:"kept_execution_id"`
	KeptScheduledFor *time.Time     `db:"kept_scheduled_for"`
	KeptOverdueBy    *time.Duration `db:"kept_overdue_by"`
	// ErrorClasses are every class of the error that paused the workflow,
	// LastErrorClass first.
	ErrorClasses []string `db:"error_classes"`
}

// PausedWorkflows returns the paused workflows with why they paused (the
// geneva.paused_workflows view), of one type unless workflowType is empty.
func (c *Client) PausedWorkflows(ctx context.Context, workflowType string) ([]*PausedWorkflow, error) {
	rows, err := c.db.Query(ctx, `select workflow_id, workflow_type, hero_type, hero_id, next_step_name, paused_at,
		paused_for, error_step_name, error_outcome, last_error_class, last_error_message, last_error_at,
		kept_execution_id, kept_scheduled_for, kept_overdue_by, error_classes
		from geneva.paused_workflows where $1::text is null or workflow_type = $1 order by workflow_id`,
		nullIfEmpty(workflowType))
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
}

// StuckExecutions returns the executions housekeeping would recover as stuck
// with the thresholds of the housekeeping settings (the
// geneva.stuck_executions view).
func (c *Client) StuckExecutions(ctx context.Context) ([]*StuckExecution, error) {
	rows, err := c.db.Query(ctx, `select execution_id, workflow_id, workflow_type, hero_type, hero_id, step_name,
		state, scheduled_for, started_at, running_for, silent_for, overdue_by, job_id
		from geneva.stuck_executions order by execution_id`)
	return collect[StuckExecution](rows, err)
}

// StepStat is a row of the geneva.step_stats view.
type StepStat struct {
	WorkflowType       string           `db:"workflow_type"`
	StepName           string           `db:"step_name"`
	Executions         int64            `db:"executions"`
	Runs               int64            `db:"runs"`
	Outcomes           map[string]int64 `db:"outcomes"`
	QueueLagP50Seconds *float64         `db:"queue_lag_p50_seconds"`
	QueueLagP95Seconds *float64         `db:"queue_lag_p95_seconds"`
	RunTimeP50Seconds  *float64         `db:"run_time_p50_seconds"`
	RunTimeP95Seconds  *float64         `db:"run_time_p95_seconds"`
}

// StepStats returns, per workflow type and step, the executions that ended
// since the start of the hour 24 hours ago: outcomes, queue lag and run time
// percentiles, within 1% (the geneva.step_stats view).
func (c *Client) StepStats(ctx context.Context) ([]*StepStat, error) {
	rows, err := c.db.Query(ctx, `select workflow_type, step_name, executions, runs, outcomes,
		queue_lag_p50_seconds, queue_lag_p95_seconds, run_time_p50_seconds, run_time_p95_seconds
		from geneva.step_stats order by workflow_type, step_name`)
	return collect[StepStat](rows, err)
}

func collect[T any](rows pgx.Rows, err error) ([]*T, error) {
	if err != nil {
		return nil, mapError(err)
	}
	all, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[T])
	return all, mapError(err)
}
