package goclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/geneva-dev/geneva/internal/sqlerr"
)

// DB runs the client's SQL: a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Client calls Geneva's SQL functions for an application or operator. It
// holds its DB and whether that is a cells' router (OnRouter, asked once);
// it is safe for concurrent use when its DB is.
type Client struct {
	db DB

	// router caches OnRouter: 0 not known yet, 1 no, 2 yes.
	router atomic.Int32
}

// New returns a client that runs on db: a *pgxpool.Pool, or a pgx.Tx to
// work in the caller's transaction.
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

	// Group is the workflow's group (a tenant, an account): shown in the
	// views, and the key of the type's limits by group.
	//
	// Defaults to none.
	Group string

	// IdempotencyKey names the request creating the workflow (an order's id,
	// an HTTP Idempotency-Key header): while the key is within the type's
	// "idempotency_ttl" (24 hours unless its definition says), creating with
	// it again returns the first workflow's id, ended or not, and creates
	// nothing, even when concurrent calls race. Up to 255 bytes. Unlike the
	// one ongoing workflow per hero (*DuplicateWorkflowError), a repeated
	// request succeeds with the first answer.
	//
	// Defaults to none.
	IdempotencyKey string

	// ParentID makes the workflow a child of that workflow (docs/children.md):
	// the parent's join ("await": {"children": …}) counts it, and canceling
	// the parent cancels it. ErrNotFound for an unknown parent,
	// ErrIllegalTransition for one that has ended.
	//
	// Defaults to none: a root workflow.
	ParentID int64
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
	err := c.db.QueryRow(ctx, "select geneva.create_workflow($1, $2, $3, $4, $5, $6, $7, $8)",
		workflowType, heroType, heroID, opts.AllowMultiple, nullIfZero(opts.TraceContext),
		nullIfZero(opts.Group), nullIfZero(opts.IdempotencyKey), nullIfZero(opts.ParentID)).Scan(&id)
	if err != nil {
		return 0, sqlerr.MapCreate(err, workflowType, heroType, heroID)
	}
	return id, nil
}

// CreateWorkflowsOpts are options for CreateWorkflows.
type CreateWorkflowsOpts struct {
	// AllowMultiple lets each hero have several ongoing workflows of the
	// type (and appear more than once in the list).
	//
	// Defaults to false: a hero with an ongoing workflow of the type, or
	// twice in the list, refuses the whole call with a
	// *DuplicateWorkflowError naming the first such hero.
	AllowMultiple bool

	// TraceContext is the W3C traceparent of the request creating the
	// workflows, stored with each (see CreateWorkflowOpts.TraceContext).
	//
	// Defaults to none.
	TraceContext string

	// Groups holds each workflow's group, one per hero ("" for none), as
	// CreateWorkflowOpts.Group.
	//
	// Defaults to none for every workflow.
	Groups []string

	// IdempotencyKeys holds each request's key, one per hero ("" for none),
	// as CreateWorkflowOpts.IdempotencyKey: a key given before, within the
	// type's TTL, returns the first workflow's id and creates nothing for
	// that hero; a key twice in the list creates once.
	//
	// Defaults to none for every workflow.
	IdempotencyKeys []string

	// ParentID makes the workflows children of that workflow, as
	// CreateWorkflowOpts.ParentID.
	//
	// Defaults to none.
	ParentID int64

	// SkipOngoing skips a hero that has an ongoing workflow of the type (or
	// appears again later in the list) instead of refusing the whole call:
	// its id in the result is 0, and the others are created. Not with
	// AllowMultiple or IdempotencyKeys (ErrInvalidArgument).
	//
	// Defaults to false.
	SkipOngoing bool

	// ChildKeys holds each child's key among the parent's children, one per
	// hero ("" for none; with ParentID only, not with IdempotencyKeys), as
	// a step's worker.Child.Key: a key the parent's children have already,
	// or twice in the list, is not created again (its id in the result is
	// 0).
	//
	// Defaults to none for every workflow.
	ChildKeys []string
}

// CreateWorkflows creates a workflow of workflowType for each of the heroes
// and schedules each one's first step, in one statement
// (geneva.create_workflows): all of them or, on an error, none. It returns
// their ids in the order of heroIDs (0 for a hero skipped: SkipOngoing, or
// a child key taken: ChildKeys). Creating many workflows at once costs
// a fraction of creating them one by one (bench/RESULTS.md); as with
// CreateWorkflow, make the Client on a pgx.Tx to commit them with the
// caller's own writes.
//
// Errors: ErrUnknownWorkflowType; *DuplicateWorkflowError
// (ErrDuplicateWorkflow) naming the first hero refused; ErrInvalidArgument,
// also when Groups or IdempotencyKeys is not as long as heroIDs.
func (c *Client) CreateWorkflows(ctx context.Context, workflowType, heroType string, heroIDs []string, opts *CreateWorkflowsOpts) ([]int64, error) {
	if opts == nil {
		opts = &CreateWorkflowsOpts{}
	}
	if heroIDs == nil {
		heroIDs = []string{}
	}
	var created []*int64
	err := c.db.QueryRow(ctx, "select geneva.create_workflows($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
		workflowType, heroType, heroIDs, opts.AllowMultiple, nullIfZero(opts.TraceContext),
		nullsIfEmpty(opts.Groups), nullsIfEmpty(opts.IdempotencyKeys), nullIfZero(opts.ParentID),
		opts.SkipOngoing, nullsIfEmpty(opts.ChildKeys)).Scan(&created)
	if err != nil {
		// (the hero refused, as the message names it)
		refused := ""
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			for _, id := range heroIDs {
				if strings.HasPrefix(pgErr.Message, fmt.Sprintf("hero %s %s already has", heroType, id)) {
					refused = id
					break
				}
			}
		}
		return nil, sqlerr.MapCreate(err, workflowType, heroType, refused)
	}
	ids := make([]int64, len(created))
	for i, id := range created {
		if id != nil {
			ids[i] = *id
		}
	}
	return ids, nil
}

// GetWorkflow returns a workflow (geneva.get_workflow).
//
// Errors: ErrNotFound.
func (c *Client) GetWorkflow(ctx context.Context, workflowID int64) (*Workflow, error) {
	return c.workflowCall(ctx, "get_workflow", workflowID, readColumns)
}

// PauseWorkflow pauses a workflow (geneva.pause_workflow): at once when it is
// ready, keeping its scheduled step; at the end of its running step when it is
// performing. It returns the workflow afterwards.
//
// Errors: ErrNotFound; ErrIllegalTransition for a paused, finished or canceled
// workflow.
func (c *Client) PauseWorkflow(ctx context.Context, workflowID int64) (*Workflow, error) {
	return c.workflowCall(ctx, "pause_workflow", workflowID, verbColumns)
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
	return c.workflowCall(ctx, "resume_workflow", workflowID, verbColumns)
}

// CancelWorkflow cancels a workflow (geneva.cancel_workflow): at once when it
// is ready or paused, at the end of its running step when it is performing.
// It returns the workflow afterwards.
//
// Errors: ErrNotFound; ErrIllegalTransition for a finished or canceled
// workflow.
func (c *Client) CancelWorkflow(ctx context.Context, workflowID int64) (*Workflow, error) {
	return c.workflowCall(ctx, "cancel_workflow", workflowID, verbColumns)
}

// SkipStep skips the step a ready or paused workflow would run next and
// schedules the one after it (geneva.skip_step). It returns the workflow
// afterwards.
//
// Errors: ErrNotFound; ErrIllegalTransition for a performing, finished or
// canceled workflow.
func (c *Client) SkipStep(ctx context.Context, workflowID int64) (*Workflow, error) {
	return c.workflowCall(ctx, "skip_step", workflowID, verbColumns)
}

// workflowCall calls one of the functions that take a workflow id and return
// its row, selecting columns (readColumns or verbColumns). function is a
// constant of this package.
func (c *Client) workflowCall(ctx context.Context, function string, workflowID int64, columns string) (*Workflow, error) {
	rows, err := c.db.Query(ctx, "select "+columns+" from geneva."+function+"($1)", workflowID)
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
	rows, err := c.db.Query(ctx, "select "+verbColumns+" from geneva.schedule_step($1, $2)", workflowID, nullIfZero(stepName))
	if err != nil {
		return nil, mapError(err)
	}
	workflow, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[Workflow])
	return workflow, mapError(err)
}

// Housekeep runs one round of housekeeping (geneva.housekeep) and returns its
// counts. Call it again while More is true. Each threshold params does not
// give (nil params: none) is the housekeeping settings' (see
// HousekeepingSettings); a negative Retention deletes nothing this round.
//
// geneva.housekeep is granted to the operator role only: workers run rounds
// with HousekeepIfDue, which takes the settings' thresholds.
func (c *Client) Housekeep(ctx context.Context, params *HousekeepParams) (*HousekeepResult, error) {
	var result HousekeepResult
	err := c.db.QueryRow(ctx, "select geneva.housekeep($1, $2, $3, $4, $5, $6)", params.args()...).Scan(&result)
	if err != nil {
		return nil, mapError(err)
	}
	return &result, nil
}

// HousekeepIfDue runs one round of housekeeping (geneva.housekeep_if_due),
// with the thresholds of the housekeeping settings, unless one started within
// interval (zero: the settings' RoundInterval) or another caller is running
// one; then it returns nil. Workers call it on a timer; call it again at once
// while the result's More is true.
//
// Errors: ErrInvalidArgument (a negative interval).
func (c *Client) HousekeepIfDue(ctx context.Context, interval time.Duration) (*HousekeepResult, error) {
	var result *HousekeepResult
	err := c.db.QueryRow(ctx, "select geneva.housekeep_if_due($1)", nullIfZero(interval)).Scan(&result)
	if err != nil {
		return nil, mapError(err)
	}
	return result, nil
}

// HousekeepingSettings returns the housekeeping settings
// (geneva.get_housekeeping_settings): the thresholds of every worker's rounds
// and of Housekeep for those it is not given, and the interval between the
// workers' rounds.
func (c *Client) HousekeepingSettings(ctx context.Context) (*HousekeepingSettings, error) {
	rows, err := c.db.Query(ctx, "select "+housekeepingSettingsColumns+" from geneva.get_housekeeping_settings()")
	if err != nil {
		return nil, mapError(err)
	}
	settings, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[HousekeepingSettings])
	return settings, mapError(err)
}

// SetHousekeepingSettings changes the housekeeping settings
// (geneva.set_housekeeping_settings) and returns them as they are after. Each
// field params does not give (nil, empty, 0) stays as it is; a negative
// Retention keeps ended workflows forever. It needs the operator role.
//
// Errors: ErrInvalidArgument (an unknown recovery action, a negative
// threshold or round interval, a negative batch size or runaway threshold,
// an action retention below its floor, a partition interval other than a
// day or a week, an unknown archive); a *Error with SQLSTATE 42501 for a floor lowered by a
// role other than the schema's owner.
func (c *Client) SetHousekeepingSettings(ctx context.Context, params *HousekeepingSettingsParams) (*HousekeepingSettings, error) {
	rows, err := c.db.Query(ctx, "select "+housekeepingSettingsColumns+
		" from geneva.set_housekeeping_settings($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)", params.args()...)
	if err != nil {
		return nil, mapError(err)
	}
	settings, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[HousekeepingSettings])
	return settings, mapError(err)
}

// housekeepingSettingsColumns are the columns of HousekeepingSettings. The
// settings' intervals may be up to 1000 years ("never"), which a
// time.Duration cannot hold (pgx wraps it round to a negative one, and a
// negative Retention given back would mean "keep forever"): each is read as
// at most the longest a Duration holds (atMostADuration), "never" still.
var housekeepingSettingsColumns = atMostADuration("retention") + ", " +
	atMostADuration("stuck_in_progress_after") + ", " + atMostADuration("stuck_scheduled_after") + ", " +
	"recovery_action, batch_size, " + atMostADuration("round_interval") + ", " +
	atMostADuration("action_retention") + ", " + atMostADuration("action_retention_floor") +
	", runaway_executions, runaway_repeats, partition_interval, " + atMostADuration("move_after") +
	", archive, updated_at, updated_by"

// atMostADuration is the interval column, as SQL, read as at most 292
// years: the longest whole number of years a time.Duration holds, as pgx
// counts them (a month of 30 days). NULL stays NULL.
func atMostADuration(column string) string {
	return "case when " + column + " > interval '292 years' then interval '292 years' else " + column + " end as " + column
}

// args are the SQL arguments of geneva.housekeep, and the first of
// geneva.set_housekeeping_settings, for params: NULL for each not given
// (SQL's "the setting" or "unchanged"), and p_keep_forever.
func (params *HousekeepParams) args() []any {
	if params == nil {
		params = &HousekeepParams{}
	}
	retention, keepForever := params.Retention, false
	if retention != nil && *retention < 0 {
		retention, keepForever = nil, true
	}
	return []any{
		retention, params.StuckInProgressAfter, params.StuckScheduledAfter,
		nullIfZero(string(params.RecoveryAction)), nullIfZero(params.BatchSize), keepForever,
	}
}

// args are the SQL arguments of geneva.set_housekeeping_settings for params:
// the thresholds' (HousekeepParams.args), then the round interval and the
// action log's retention and floor, the runaway thresholds, history's
// partition interval, move_after and archive, NULL when not given
// ("unchanged").
func (params *HousekeepingSettingsParams) args() []any {
	if params == nil {
		params = &HousekeepingSettingsParams{}
	}
	return append(params.HousekeepParams.args(), params.RoundInterval, params.ActionRetention, params.ActionRetentionFloor,
		nullIfZero(params.RunawayExecutions), nullIfZero(params.RunawayRepeats),
		nullIfZero(params.PartitionInterval), params.MoveAfter, nullIfZero(string(params.Archive)))
}

// WorkflowCount is a row of the geneva.workflow_counts view.
type WorkflowCount struct {
	WorkflowType string        `db:"workflow_type"`
	State        WorkflowState `db:"state"`
	Workflows    int64         `db:"workflows"`
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

// nullsIfEmpty is nullIfZero for each element of a list (nil for none).
func nullsIfEmpty(list []string) []*string {
	if list == nil {
		return nil
	}
	out := make([]*string, len(list))
	for i, s := range list {
		out[i] = nullIfZero(s)
	}
	return out
}

// nullIfZero is v, or nil (SQL's NULL: "not given") for its type's zero.
func nullIfZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}
