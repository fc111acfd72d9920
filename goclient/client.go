package goclient

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DB runs the client's SQL: a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Client calls Geneva's SQL functions.
type Client struct {
	db DB
}

// New returns a client that runs on db (normally a *pgxpool.Pool).
func New(db DB) *Client {
	return &Client{db: db}
}

// CreateWorkflowOpts are options for CreateWorkflow.
type CreateWorkflowOpts struct {
	// AllowMultiple lets the hero have several ongoing workflows of the type.
	//
	// Defaults to false: a second ongoing workflow for the hero is refused
	// with a *DuplicateWorkflowError.
	AllowMultiple bool

	// TraceContext is the W3C traceparent of the request creating the
	// workflow (e.g. "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
	// stored with the workflow: every step's span links to it (package
	// otelgeneva fills it from a context).
	//
	// Defaults to none.
	TraceContext string
}

// CreateWorkflow creates a workflow of workflowType for the hero and schedules
// its first step (geneva.create_workflow). It returns the workflow's id.
//
// Errors: ErrUnknownWorkflowType; *DuplicateWorkflowError (ErrDuplicateWorkflow)
// when the hero has an ongoing workflow of the type; ErrInvalidArgument.
func (c *Client) CreateWorkflow(ctx context.Context, workflowType, heroType, heroID string, opts *CreateWorkflowOpts) (int64, error) {
	if opts == nil {
		opts = &CreateWorkflowOpts{}
	}
	var id int64
	err := c.db.QueryRow(ctx, "select geneva.create_workflow($1, $2, $3, $4, $5)",
		workflowType, heroType, heroID, opts.AllowMultiple, nullIfEmpty(opts.TraceContext)).Scan(&id)
	if err != nil {
		err = mapError(err)
		var mapped *Error
		if errors.As(err, &mapped) && mapped.Kind == ErrDuplicateWorkflow { //nolint:errorlint // Kind is the sentinel itself, not a wrapped error
			return 0, &DuplicateWorkflowError{WorkflowType: workflowType, HeroType: heroType, HeroID: heroID, PgError: mapped.PgError}
		}
		return 0, err
	}
	return id, nil
}

// DefineWorkflow registers or replaces the definition of a workflow type
// (geneva.define_workflow); definition is its JSON. The worker registers its
// workflows itself at start-up.
//
// Errors: ErrInvalidArgument, naming what is wrong with the definition.
func (c *Client) DefineWorkflow(ctx context.Context, workflowType string, definition json.RawMessage) error {
	_, err := c.db.Exec(ctx, "select geneva.define_workflow($1, $2::jsonb)", workflowType, string(definition))
	return mapError(err)
}

// GetWorkflow returns a workflow (geneva.get_workflow).
//
// Errors: ErrNotFound.
func (c *Client) GetWorkflow(ctx context.Context, workflowID int64) (*Workflow, error) {
	return c.workflowCall(ctx, "get_workflow", workflowID)
}

// ListWorkflows returns workflows by state, type and hero, newest first
// (geneva.list_workflows).
func (c *Client) ListWorkflows(ctx context.Context, params *ListWorkflowsParams) ([]*Workflow, error) {
	if params == nil {
		params = &ListWorkflowsParams{}
	}
	limit := params.Limit
	if limit == 0 {
		limit = 100
	}
	rows, err := c.db.Query(ctx, "select "+workflowColumns+" from geneva.list_workflows($1, $2, $3, $4, $5, $6)",
		nullIfEmpty(params.State), nullIfEmpty(params.WorkflowType), nullIfEmpty(params.HeroType),
		nullIfEmpty(params.HeroID), limit, nullIfZero(params.BeforeID))
	if err != nil {
		return nil, mapError(err)
	}
	workflows, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[Workflow])
	return workflows, mapError(err)
}

// PauseWorkflow pauses a workflow (geneva.pause_workflow): at once when it is
// ready, keeping its scheduled step; at the end of its running step when it is
// performing. It returns the workflow afterwards.
//
// Errors: ErrNotFound; ErrIllegalTransition for a paused, finished or canceled
// workflow.
func (c *Client) PauseWorkflow(ctx context.Context, workflowID int64) (*Workflow, error) {
	return c.workflowCall(ctx, "pause_workflow", workflowID)
}

// ResumeWorkflow resumes a paused workflow (geneva.resume_workflow): the step
// it kept runs at its time (at once if overdue), or the step it paused on runs
// again now. On a performing workflow with a pause requested, it withdraws
// the request (the workflow stays performing). It returns the workflow
// afterwards.
//
// Errors: ErrNotFound; ErrIllegalTransition for a workflow that is neither
// paused nor performing with a pause requested.
func (c *Client) ResumeWorkflow(ctx context.Context, workflowID int64) (*Workflow, error) {
	return c.workflowCall(ctx, "resume_workflow", workflowID)
}

// CancelWorkflow cancels a workflow (geneva.cancel_workflow): at once when it
// is ready or paused, at the end of its running step when it is performing.
// It returns the workflow afterwards.
//
// Errors: ErrNotFound; ErrIllegalTransition for a finished or canceled
// workflow.
func (c *Client) CancelWorkflow(ctx context.Context, workflowID int64) (*Workflow, error) {
	return c.workflowCall(ctx, "cancel_workflow", workflowID)
}

// SkipStep skips the step a ready or paused workflow would run next and
// schedules the one after it (geneva.skip_step). It returns the workflow
// afterwards.
//
// Errors: ErrNotFound; ErrIllegalTransition for a performing, finished or
// canceled workflow.
func (c *Client) SkipStep(ctx context.Context, workflowID int64) (*Workflow, error) {
	return c.workflowCall(ctx, "skip_step", workflowID)
}

// workflowCall calls one of the functions that take a workflow id and return
// its row. function is a constant of this package.
func (c *Client) workflowCall(ctx context.Context, function string, workflowID int64) (*Workflow, error) {
	rows, err := c.db.Query(ctx, "select "+workflowColumns+" from geneva."+function+"($1)", workflowID)
	if err != nil {
		return nil, mapError(err)
	}
	workflow, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[Workflow])
	return workflow, mapError(err)
}

// StepHistory returns a workflow's step executions in order
// (geneva.step_history).
//
// Errors: ErrNotFound.
func (c *Client) StepHistory(ctx context.Context, workflowID int64) ([]*StepExecution, error) {
	rows, err := c.db.Query(ctx, "select "+stepExecutionColumns+" from geneva.step_history($1)", workflowID)
	if err != nil {
		return nil, mapError(err)
	}
	executions, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[StepExecution])
	return executions, mapError(err)
}

// GetStepExecution returns a step execution (geneva.get_step_execution).
//
// Errors: ErrNotFound.
func (c *Client) GetStepExecution(ctx context.Context, executionID int64) (*StepExecution, error) {
	rows, err := c.db.Query(ctx, "select "+stepExecutionColumns+" from geneva.get_step_execution($1)", executionID)
	if err != nil {
		return nil, mapError(err)
	}
	execution, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[StepExecution])
	return execution, mapError(err)
}

// ScheduleStep runs a step of a ready or paused workflow now: stepName, or the
// step that would run next when it is empty (geneva.schedule_step). The
// workflow's scheduled execution is replaced. It returns the workflow
// afterwards.
//
// Errors: ErrNotFound; ErrInvalidArgument for a step the workflow does not
// have; ErrIllegalTransition for a performing, finished or canceled workflow.
func (c *Client) ScheduleStep(ctx context.Context, workflowID int64, stepName string) (*Workflow, error) {
	rows, err := c.db.Query(ctx, "select "+workflowColumns+" from geneva.schedule_step($1, $2)", workflowID, nullIfEmpty(stepName))
	if err != nil {
		return nil, mapError(err)
	}
	workflow, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[Workflow])
	return workflow, mapError(err)
}

// Housekeep runs one round of housekeeping (geneva.housekeep) and returns its
// counts. Call it again while More is true.
func (c *Client) Housekeep(ctx context.Context, params *HousekeepParams) (*HousekeepResult, error) {
	var result HousekeepResult
	err := c.db.QueryRow(ctx, "select geneva.housekeep($1, $2, $3, $4, $5)", housekeepArgs(params)...).Scan(&result)
	if err != nil {
		return nil, mapError(err)
	}
	return &result, nil
}

// HousekeepIfDue runs one round of housekeeping (geneva.housekeep_if_due)
// unless one started within interval (zero means 1 minute) or another caller
// is running one; then it returns nil. Workers call it on a timer; call it
// again at once while the result's More is true.
func (c *Client) HousekeepIfDue(ctx context.Context, interval time.Duration, params *HousekeepParams) (*HousekeepResult, error) {
	if interval == 0 {
		interval = time.Minute
	}
	var result *HousekeepResult
	err := c.db.QueryRow(ctx, "select geneva.housekeep_if_due($1, $2, $3, $4, $5, $6)",
		append([]any{interval}, housekeepArgs(params)...)...).Scan(&result)
	if err != nil {
		return nil, mapError(err)
	}
	return result, nil
}

// housekeepArgs are the SQL arguments of geneva.housekeep for params, with
// goclient's defaults.
func housekeepArgs(params *HousekeepParams) []any {
	if params == nil {
		params = &HousekeepParams{}
	}
	// (a negative retention keeps ended workflows forever: NULL in SQL)
	retention := orDefault(params.Retention, 30*24*time.Hour)
	var retentionArg *time.Duration
	if retention >= 0 {
		retentionArg = &retention
	}
	action := params.RecoveryAction
	if action == "" {
		action = "reattempt"
	}
	batch := params.BatchSize
	if batch == 0 {
		batch = 1000
	}
	return []any{retentionArg,
		orDefault(params.StuckInProgressAfter, time.Hour), orDefault(params.StuckScheduledAfter, 15*time.Minute),
		action, batch}
}

// orDefault is *d, or def when d is nil (not given).
func orDefault(d *time.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return *d
}

// WorkflowCount is a row of the geneva.workflow_counts view.
type WorkflowCount struct {
	WorkflowType string `db:"workflow_type"`
	State        string `db:"state"`
	Workflows    int64  `db:"workflows"`
}

// WorkflowCounts returns how many workflows of each type are in each state
// (the geneva.workflow_counts view), ordered by type and state.
func (c *Client) WorkflowCounts(ctx context.Context) ([]*WorkflowCount, error) {
	rows, err := c.db.Query(ctx, "select workflow_type, state, workflows from geneva.workflow_counts order by workflow_type, state")
	if err != nil {
		return nil, mapError(err)
	}
	counts, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[WorkflowCount])
	return counts, mapError(err)
}

// StartStep claims a step execution for a worker, or records the precondition
// the worker found (geneva.start_step). It returns the step to run, or nil
// when there is nothing to run: the execution was a duplicate, early, late, its
// workflow is paused, or the precondition was recorded.
//
// Errors: ErrNotFound; ErrInvalidArgument.
func (c *Client) StartStep(ctx context.Context, executionID int64, precondition Precondition) (*StartedStep, error) {
	rows, err := c.db.Query(ctx, `select execution_id, workflow_id, workflow_type, hero_type, hero_id, step_name,
		attempt, scheduled_for, started_at, cursor, continues_from_id, queue, trace_context
		from geneva.start_step($1, $2)`,
		executionID, nullIfEmpty(string(precondition)))
	if err != nil {
		return nil, mapError(err)
	}
	steps, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[StartedStep])
	if err != nil || len(steps) == 0 {
		return nil, mapError(err)
	}
	return steps[0], nil
}

// ReportOpts are options for CompleteStep and InterruptStep.
type ReportOpts struct {
	// JobID is the River job the worker ran for the execution: SQL completes
	// it in the same transaction as the outcome.
	//
	// Defaults to none.
	JobID int64

	// Continue offers to run the next execution in the same job
	// (CompleteStep only, which then calls geneva.complete_and_continue): when
	// it is due now and has no cancel_if or skip_if to evaluate first, SQL
	// starts it and returns it as StepResult.Next.
	// Offer it only when the workflow has no condition SQL cannot see (a
	// hero check).
	//
	// Defaults to false: the next execution gets a River job.
	Continue bool
}

// CompleteStep records how a running step ended without an error
// (geneva.complete_step). wait applies to SignalReattempt and SignalSuspend.
//
// Errors: ErrNotFound; ErrInvalidArgument.
func (c *Client) CompleteStep(ctx context.Context, executionID int64, signal Signal, wait time.Duration, opts *ReportOpts) (*StepResult, error) {
	var waitArg *time.Duration
	if wait != 0 {
		waitArg = &wait
	}
	if opts == nil || !opts.Continue {
		rows, err := c.db.Query(ctx, "select outcome, workflow_state from geneva.complete_step($1, $2, $3, $4)",
			executionID, string(signal), waitArg, jobIDOf(opts))
		return collectStepResult(rows, err)
	}
	var (
		result    StepResult
		next      NextStep
		nextID    *int64
		nextName  *string
		attempt   *int
		startedAt *time.Time
	)
	err := c.db.QueryRow(ctx, `select outcome, workflow_state, next_execution_id, next_step_name, next_attempt,
		next_started_at, next_cursor, next_continues_from_id
		from geneva.complete_and_continue($1, $2, $3, $4)`,
		executionID, string(signal), waitArg, jobIDOf(opts),
	).Scan(&result.Outcome, &result.WorkflowState, &nextID, &nextName, &attempt, &startedAt, &next.Cursor, &next.ContinuesFromID)
	if err != nil {
		return nil, mapError(err)
	}
	if nextID != nil {
		next.ExecutionID, next.StepName, next.Attempt, next.StartedAt = *nextID, deref(nextName), deref(attempt), deref(startedAt)
		result.Next = &next
	}
	return &result, nil
}

func jobIDOf(opts *ReportOpts) *int64 {
	if opts == nil || opts.JobID == 0 {
		return nil
	}
	return &opts.JobID
}

// FailStep records an error of a step, or of its preconditions
// (geneva.fail_step). SQL resolves the exception policy and tells whether to
// report the error; when the policy names a handler, the result's Action is
// "handler" and nothing is recorded until FailStep is called again with the
// handler's decision in failure.HandlerSignal.
//
// Errors: ErrNotFound; ErrInvalidArgument.
func (c *Client) FailStep(ctx context.Context, executionID int64, failure *Failure) (*FailResult, error) {
	var handlerWait *time.Duration
	if failure.HandlerWait != 0 {
		handlerWait = &failure.HandlerWait
	}
	rows, err := c.db.Query(ctx, `select action, outcome, report, workflow_state, handler
		from geneva.fail_step($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		executionID, failure.Classes, failure.Message, nullIfEmpty(failure.Backtrace),
		nullIfEmpty(string(failure.HandlerSignal)), handlerWait, failure.Precondition, nullIfZero(failure.JobID),
		failure.Chain)
	if err != nil {
		return nil, mapError(err)
	}
	result, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[FailResult])
	return result, mapError(err)
}

// CheckpointStep saves a resumable step's cursor (geneva.checkpoint_step). It
// returns true when the step should stop now: a pause or cancel was
// requested, or the execution moved on.
//
// Errors: ErrNotFound.
func (c *Client) CheckpointStep(ctx context.Context, executionID int64, cursor json.RawMessage) (bool, error) {
	var stop bool
	err := c.db.QueryRow(ctx, "select geneva.checkpoint_step($1, $2::jsonb)", executionID, string(cursor)).Scan(&stop)
	return stop, mapError(err)
}

// InterruptStep gives back a running step that a shutting-down worker could
// not finish; it is scheduled again now (geneva.interrupt_step).
//
// Errors: ErrNotFound.
func (c *Client) InterruptStep(ctx context.Context, executionID int64, opts *ReportOpts) (*StepResult, error) {
	rows, err := c.db.Query(ctx, "select outcome, workflow_state from geneva.interrupt_step($1, $2)", executionID, jobIDOf(opts))
	return collectStepResult(rows, err)
}

// HeartbeatStep is a running step's sign of life (geneva.heartbeat_step):
// housekeeping recovers in_progress executions silent for too long. It
// returns false when the execution is no longer in_progress. The worker sends
// heartbeats itself.
//
// Errors: ErrInvalidArgument.
func (c *Client) HeartbeatStep(ctx context.Context, executionID int64) (bool, error) {
	var running bool
	err := c.db.QueryRow(ctx, "select geneva.heartbeat_step($1)", executionID).Scan(&running)
	return running, mapError(err)
}

// StepDefined reports whether the registered definition of a workflow type
// has the named step (geneva.step_defined).
func (c *Client) StepDefined(ctx context.Context, workflowType, stepName string) (bool, error) {
	var defined bool
	err := c.db.QueryRow(ctx, "select geneva.step_defined($1, $2)", workflowType, stepName).Scan(&defined)
	return defined, mapError(err)
}

// TrackHero makes deleting a row of table (e.g. "public.users") cancel the
// ongoing workflows of heroType whose hero_id is the row's idColumn
// (geneva.track_hero): a trigger, attached once, typically in a migration.
// An empty idColumn means "id".
//
// Errors: ErrInvalidArgument (an empty hero type, a column the table does not
// have); an unknown table is PostgreSQL's own error (42P01).
func (c *Client) TrackHero(ctx context.Context, table, heroType, idColumn string) error {
	if idColumn == "" {
		idColumn = "id"
	}
	_, err := c.db.Exec(ctx, "select geneva.track_hero($1::regclass, $2, $3)", table, heroType, idColumn)
	return mapError(err)
}

// UntrackHero removes what TrackHero attached (geneva.untrack_hero).
func (c *Client) UntrackHero(ctx context.Context, table, heroType string) error {
	_, err := c.db.Exec(ctx, "select geneva.untrack_hero($1::regclass, $2)", table, heroType)
	return mapError(err)
}

func collectStepResult(rows pgx.Rows, err error) (*StepResult, error) {
	if err != nil {
		return nil, mapError(err)
	}
	result, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[StepResult])
	return result, mapError(err)
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullIfZero(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

func deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}
