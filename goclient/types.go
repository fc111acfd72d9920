package goclient

import (
	"encoding/json"
	"time"
)

// Workflow states.
const (
	StateReady      = "ready"      // waiting for its next step execution
	StatePerforming = "performing" // a step is running now
	StatePaused     = "paused"     // stopped, waiting for a person; keeps its hero's slot
	StateFinished   = "finished"   // all steps done, or finished signalled (terminal)
	StateCanceled   = "canceled"   // canceled (terminal)
)

// Step execution states.
const (
	ExecutionScheduled  = "scheduled"
	ExecutionInProgress = "in_progress"
	ExecutionCompleted  = "completed"
	ExecutionFailed     = "failed"
	ExecutionCanceled   = "canceled"
	ExecutionSkipped    = "skipped"
)

// Workflow is a row of geneva.workflows.
type Workflow struct {
	ID           int64  `db:"id"`
	WorkflowType string `db:"workflow_type"`
	HeroType     string `db:"hero_type"`
	HeroID       string `db:"hero_id"`
	State        string `db:"state"`
	// CurrentStepName is the step running now (set only while performing).
	CurrentStepName *string `db:"current_step_name"`
	// NextStepName is the step of the most recently scheduled execution.
	NextStepName  *string `db:"next_step_name"`
	AllowMultiple bool    `db:"allow_multiple"`
	// RequestedAction is "pause" or "cancel" when an operator asked a
	// performing workflow to stop at the step boundary.
	RequestedAction *string    `db:"requested_action"`
	CreatedAt       time.Time  `db:"created_at"`
	UpdatedAt       time.Time  `db:"updated_at"`
	StartedAt       *time.Time `db:"started_at"`
	TransitionedAt  *time.Time `db:"transitioned_at"`
	PausedAt        *time.Time `db:"paused_at"`
	FinishedAt      *time.Time `db:"finished_at"`
	CanceledAt      *time.Time `db:"canceled_at"`
}

const workflowColumns = `id, workflow_type, hero_type, hero_id, state, current_step_name, next_step_name,
	allow_multiple, requested_action, created_at, updated_at, started_at, transitioned_at, paused_at,
	finished_at, canceled_at`

// StepExecution is a row of geneva.step_executions: one attempt to run one
// step.
type StepExecution struct {
	ID             int64      `db:"id"`
	WorkflowID     int64      `db:"workflow_id"`
	StepName       string     `db:"step_name"`
	State          string     `db:"state"`
	Outcome        *string    `db:"outcome"`
	ScheduledFor   time.Time  `db:"scheduled_for"`
	StartedAt      *time.Time `db:"started_at"`
	CompletedAt    *time.Time `db:"completed_at"`
	FailedAt       *time.Time `db:"failed_at"`
	CanceledAt     *time.Time `db:"canceled_at"`
	SkippedAt      *time.Time `db:"skipped_at"`
	FinishedAt     *time.Time `db:"finished_at"`
	ErrorClassName *string    `db:"error_class_name"`
	ErrorMessage   *string    `db:"error_message"`
	ErrorBacktrace *string    `db:"error_backtrace"`
	// ErrorClasses are every class of the error's chain, ErrorClassName
	// first (see Failure.Chain).
	ErrorClasses    []string        `db:"error_classes"`
	JobID           *int64          `db:"job_id"`
	Metadata        map[string]any  `db:"metadata"`
	Cursor          json.RawMessage `db:"cursor"`
	ContinuesFromID *int64          `db:"continues_from_id"`
	CreatedAt       time.Time       `db:"created_at"`
	UpdatedAt       time.Time       `db:"updated_at"`
}

const stepExecutionColumns = `id, workflow_id, step_name, state, outcome, scheduled_for, started_at,
	completed_at, failed_at, canceled_at, skipped_at, finished_at, error_class_name, error_message,
	error_backtrace, error_classes, job_id, metadata, cursor, continues_from_id, created_at, updated_at`

// Precondition is what a worker found before starting a step, for StartStep.
type Precondition string

const (
	// PreconditionNone: the step should run.
	PreconditionNone Precondition = ""
	// PreconditionCancel: a cancel_if condition held.
	PreconditionCancel Precondition = "cancel"
	// PreconditionSkip: the step's skip_if condition held.
	PreconditionSkip Precondition = "skip"
	// PreconditionHeroMissing: the hero could not be found.
	PreconditionHeroMissing Precondition = "hero_missing"
)

// StartedStep is what StartStep returns when the worker should run the step.
type StartedStep struct {
	ExecutionID  int64     `db:"execution_id"`
	WorkflowID   int64     `db:"workflow_id"`
	WorkflowType string    `db:"workflow_type"`
	HeroType     string    `db:"hero_type"`
	HeroID       string    `db:"hero_id"`
	StepName     string    `db:"step_name"`
	Attempt      int       `db:"attempt"`
	ScheduledFor time.Time `db:"scheduled_for"`
	StartedAt    time.Time `db:"started_at"`
	// Cursor is a resumable step's cursor, handed over from the execution it
	// continues (ContinuesFromID).
	Cursor          json.RawMessage `db:"cursor"`
	ContinuesFromID *int64          `db:"continues_from_id"`
	// Queue is the River queue of the workflow type.
	Queue string `db:"queue"`
	// TraceContext is the W3C traceparent the workflow was created with
	// (CreateWorkflowOpts.TraceContext); empty when none.
	TraceContext *string `db:"trace_context"`
}

// Signal is how a step ended without an error, for CompleteStep.
type Signal string

const (
	SignalSuccess   Signal = "success"   // the step is done; the next one runs
	SignalFinished  Signal = "finished"  // the workflow is done
	SignalReattempt Signal = "reattempt" // run the step again, after a wait
	// SignalReattemptRewind runs a resumable step again after a wait, from
	// no cursor (the start).
	SignalReattemptRewind Signal = "reattempt_rewind"
	SignalSkip            Signal = "skip"    // skip the step; the next one runs
	SignalCancel          Signal = "cancel"  // cancel the workflow
	SignalPause           Signal = "pause"   // pause the workflow; resume reruns the step
	SignalSuspend         Signal = "suspend" // a resumable step hands over to its successor
)

// StepResult is what CompleteStep and InterruptStep recorded.
type StepResult struct {
	// Outcome is the execution's outcome, or nil when nothing was recorded
	// because the execution had moved on (e.g. housekeeping recovered it).
	Outcome *string `db:"outcome"`
	// WorkflowState is the workflow's state afterwards.
	WorkflowState string `db:"workflow_state"`
	// Next is the execution CompleteStep started for the worker to run at
	// once (ReportOpts.Continue), or nil.
	Next *NextStep `db:"-"`
}

// NextStep is an execution started by CompleteStep for the worker to run in
// the same job: the next step of the same workflow, due now, with no
// condition to evaluate first.
type NextStep struct {
	ExecutionID int64
	StepName    string
	Attempt     int
	StartedAt   time.Time
	// Cursor and ContinuesFromID are a resumable step's hand-over.
	Cursor          json.RawMessage
	ContinuesFromID *int64
}

// Failure describes an error of a step, for FailStep.
type Failure struct {
	// Classes are the error's type names, outermost first, and the names of
	// the matchers that match it: SQL matches exception policies against
	// them.
	Classes []string
	// Chain lists the type names of the error's chain, each once, the class
	// to record first (the worker puts the most specific first, looking
	// through the standard library's anonymous wrappers), then the others. It
	// is stored as the execution's error_classes, its first element as
	// error_class_name.
	//
	// Defaults to Classes (empty: Classes is stored instead).
	Chain []string
	// Message is the error's text.
	Message string
	// Backtrace is the stack, if known.
	Backtrace string
	// HandlerSignal is an imperative handler's decision, when FailStep asked
	// for one: reattempt, skip, cancel, pause or finished.
	HandlerSignal Signal
	// HandlerWait is the wait of a handler's reattempt.
	HandlerWait time.Duration
	// JobID is the River job the worker ran for the execution: SQL completes
	// it in the same transaction as the outcome (not when it asks for a
	// handler's decision).
	JobID int64
	// Precondition says the error came from evaluating the preconditions
	// (cancel_if, skip_if, the hero check) before StartStep: it then applies
	// to the scheduled execution. Otherwise it applies to the running one.
	Precondition bool
}

// FailResult is what FailStep decided.
type FailResult struct {
	// Action is what was applied: pause, cancel, skip, reattempt, finished; or
	// "handler" when the handler named by Handler must decide first (call
	// FailStep again with its decision). Nil when nothing was recorded.
	Action *string `db:"action"`
	// Outcome is the execution's outcome, or nil when nothing was recorded
	// (the execution had moved on, or its workflow is paused).
	Outcome *string `db:"outcome"`
	// Report tells whether the error should be reported, per the policy.
	Report bool `db:"report"`
	// WorkflowState is the workflow's state afterwards.
	WorkflowState string `db:"workflow_state"`
	// Handler names the handler the policy gives, if any.
	Handler *string `db:"handler"`
}

// ListWorkflowsParams filters ListWorkflows. Zero fields do not filter.
type ListWorkflowsParams struct {
	// State, WorkflowType, HeroType and HeroID filter the list; each matches
	// exactly.
	//
	// Defaults to no filter (empty).
	State        string
	WorkflowType string
	HeroType     string
	HeroID       string
	// Limit is the page size, 1 to 10000.
	//
	// Defaults to 100.
	Limit int
	// BeforeID pages: pass the last ID of the previous page.
	//
	// Defaults to 0: the first page.
	BeforeID int64
}

// HousekeepParams are the thresholds of a round of housekeeping.
//
// The durations are pointers so that zero means zero: a nil field takes the
// default, a pointer to 0 is a threshold of 0 (with Go 1.26's new, write
// Retention: new(time.Duration(0)) or StuckScheduledAfter: new(time.Minute)).
type HousekeepParams struct {
	// Retention is how long finished and canceled workflows are kept after
	// they end: 0 deletes every ended workflow; a negative value keeps them
	// forever.
	//
	// Defaults (nil) to 30 days.
	Retention *time.Duration
	// StuckInProgressAfter is how long an in_progress execution may go without
	// a sign of life (its start, a checkpoint, a heartbeat) before it counts as
	// stuck (its worker died). Not negative.
	//
	// Defaults (nil) to 1 hour.
	StuckInProgressAfter *time.Duration
	// StuckScheduledAfter is how long a scheduled execution of a ready
	// workflow may be overdue before it counts as stuck (its job was lost).
	// Not negative.
	//
	// Defaults (nil) to 15 minutes.
	StuckScheduledAfter *time.Duration
	// RecoveryAction is what happens to a stuck execution: "reattempt" (the
	// step runs again) or "cancel" (the workflow is canceled).
	//
	// Defaults (empty) to "reattempt".
	RecoveryAction string
	// BatchSize caps the rows of each kind a round handles; it must be
	// positive.
	//
	// Defaults (0) to 1000.
	BatchSize int
}

// HousekeepResult counts what a round of housekeeping did.
type HousekeepResult struct {
	WorkflowsCleanedUp       int `json:"workflows_cleaned_up"`
	StepExecutionsCleanedUp  int `json:"step_executions_cleaned_up"`
	StuckInProgressRecovered int `json:"stuck_in_progress_recovered"`
	StuckScheduledRecovered  int `json:"stuck_scheduled_recovered"`
	// OrphansRepaired counts workflows whose state had no matching active
	// execution (the view geneva.orphan_workflows).
	OrphansRepaired int `json:"orphans_repaired"`
	// More is true when a batch was full: another round may find more.
	More bool `json:"more"`
}

// Add adds another round's counts to r (and takes its More).
func (r *HousekeepResult) Add(round *HousekeepResult) {
	r.WorkflowsCleanedUp += round.WorkflowsCleanedUp
	r.StepExecutionsCleanedUp += round.StepExecutionsCleanedUp
	r.StuckInProgressRecovered += round.StuckInProgressRecovered
	r.StuckScheduledRecovered += round.StuckScheduledRecovered
	r.OrphansRepaired += round.OrphansRepaired
	r.More = round.More
}
