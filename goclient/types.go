package goclient

import (
	"encoding/json"
	"time"
)

// WorkflowState is the state of a workflow (geneva.workflows.state).
type WorkflowState string

// Workflow states.
const (
	StateReady      WorkflowState = "ready"      // waiting for its next step execution
	StatePerforming WorkflowState = "performing" // a step is running now
	StatePaused     WorkflowState = "paused"     // stopped, waiting for a person; keeps its hero's slot
	StateFinished   WorkflowState = "finished"   // all steps done, or finished signalled (terminal)
	StateCanceled   WorkflowState = "canceled"   // canceled (terminal)
)

// ExecutionState is the state of a step execution
// (geneva.step_executions.state).
type ExecutionState string

// Step execution states (the execution's Outcome says which of the cases).
const (
	ExecutionScheduled  ExecutionState = "scheduled"   // waiting for its time and its job
	ExecutionInProgress ExecutionState = "in_progress" // its step is running
	ExecutionCompleted  ExecutionState = "completed"   // ended without an error, or reattempted, handed over, recovered
	ExecutionFailed     ExecutionState = "failed"      // ended by an error: paused, canceled or out of reattempts
	ExecutionCanceled   ExecutionState = "canceled"    // by a condition, a signal, an operator or a missing hero
	ExecutionSkipped    ExecutionState = "skipped"     // by a condition, a signal, an exception policy or an operator
)

// Outcome is how a step execution ended (geneva.step_executions.outcome);
// each ended ExecutionState allows some of them.
type Outcome string

// Step execution outcomes, by the state that carries them (docs/sql-api.md,
// "Outcomes recorded on executions").
const (
	// completed
	OutcomeSuccess                Outcome = "success"                  // the step returned normally, or finished the workflow
	OutcomeReattempted            Outcome = "reattempted"              // the step asked to run again (Reattempt, ReattemptRewind)
	OutcomeReattemptedByException Outcome = "reattempted_by_exception" // an exception policy reattempts it
	OutcomeSuspended              Outcome = "suspended"                // a resumable step handed over to a successor
	OutcomeRecovered              Outcome = "recovered"                // also canceled: its worker stopped or died (housekeeping's recovery)

	// failed
	OutcomePausedByException   Outcome = "paused_by_exception"   // an error paused the workflow
	OutcomeCanceledByException Outcome = "canceled_by_exception" // an error canceled the workflow
	OutcomeReattemptsExhausted Outcome = "reattempts_exhausted"  // a policy's max_reattempts was spent
	OutcomeStepNotDefined      Outcome = "step_not_defined"      // no worker defines the step any more

	// canceled
	OutcomeCanceledByCondition   Outcome = "canceled_by_condition"    // cancel_if held
	OutcomeCanceledByFlowControl Outcome = "canceled_by_flow_control" // the step returned Cancel
	OutcomeCanceledExternally    Outcome = "canceled_externally"      // an operator canceled the workflow
	OutcomeCanceledHeroMissing   Outcome = "canceled_hero_missing"    // the hero is gone
	OutcomePausedByFlowControl   Outcome = "paused_by_flow_control"   // the step returned Pause
	OutcomeCanceledByTimeout     Outcome = "canceled_by_timeout"      // its awaited event did not come in time (on_timeout cancel)
	OutcomePausedByTimeout       Outcome = "paused_by_timeout"        // its awaited event did not come in time (on_timeout pause); a resume waits again
	OutcomeCanceledByEvent       Outcome = "canceled_by_event"        // an event of the type's cancel_on canceled the workflow

	// skipped
	OutcomeSkippedByCondition   Outcome = "skipped_by_condition"    // skip_if held
	OutcomeSkippedByFlowControl Outcome = "skipped_by_flow_control" // the step returned Skip
	OutcomeSkippedByException   Outcome = "skipped_by_exception"    // an exception policy skips it
	OutcomeSkippedExternally    Outcome = "skipped_externally"      // an operator skipped the step
	OutcomeSkippedByTimeout     Outcome = "skipped_by_timeout"      // its awaited event did not come in time (on_timeout skip)
)

// RequestedAction is an operator's request to a performing workflow (or an
// event's, of its type's cancel_on), carried out at the step boundary (geneva.workflows.requested_action).
type RequestedAction string

// Requested actions.
const (
	RequestedCancel        RequestedAction = "cancel"          // cancel the workflow when its step ends
	RequestedPause         RequestedAction = "pause"           // pause the workflow when its step ends
	RequestedCancelByEvent RequestedAction = "cancel_by_event" // an event of the type's cancel_on: cancel it when its step ends
)

// RecoveryAction is what housekeeping does to a stuck execution
// (geneva.housekeeping_settings.recovery_action; a row of
// geneva._signal_effects with the cause housekeeping).
type RecoveryAction string

// Recovery actions.
const (
	RecoveryReattempt RecoveryAction = "reattempt" // the step runs again
	RecoveryCancel    RecoveryAction = "cancel"    // the workflow is canceled
)

// Workflow is a row of geneva.workflows.
type Workflow struct {
	ID           int64         `db:"id"`
	WorkflowType string        `db:"workflow_type"`
	HeroType     string        `db:"hero_type"`
	HeroID       string        `db:"hero_id"`
	State        WorkflowState `db:"state"`
	// CurrentStepName is the step running now (set only while performing).
	CurrentStepName *string `db:"current_step_name"`
	// NextStepName is the step of the most recently scheduled execution.
	NextStepName  *string `db:"next_step_name"`
	AllowMultiple bool    `db:"allow_multiple"`
	// RequestedAction is set when an operator asked a performing workflow
	// to pause or cancel at the step boundary.
	RequestedAction *RequestedAction `db:"requested_action"`
	CreatedAt       time.Time        `db:"created_at"`
	UpdatedAt       time.Time        `db:"updated_at"`
	StartedAt       *time.Time       `db:"started_at"`
	TransitionedAt  *time.Time       `db:"transitioned_at"`
	PausedAt        *time.Time       `db:"paused_at"`
	FinishedAt      *time.Time       `db:"finished_at"`
	CanceledAt      *time.Time       `db:"canceled_at"`
	// Group is the workflow's group (CreateWorkflowOpts.Group); nil for none.
	Group *string `db:"group_name"`
	// RetriedFrom is the workflow this one retries (RetryWorkflow); nil for
	// one CreateWorkflow made. Client.Retries lists a workflow's retries.
	RetriedFrom *int64 `db:"retried_from"`
	// DefinitionVersion is the version of its type's definition the
	// workflow follows: the one current when it was created, then each new
	// one defined while it is ongoing (its next step follows it).
	// StartedVersion is the one current when it was created (or retried).
	// Both are nil only for a row imported by hand.
	DefinitionVersion *int `db:"definition_version"`
	StartedVersion    *int `db:"started_version"`
	// ParentID is the workflow this one is a child of
	// (CreateWorkflowOpts.ParentID), RootID the root of its tree; nil for a
	// root.
	ParentID *int64 `db:"parent_id"`
	RootID   *int64 `db:"root_id"`
	// Children counts the children created with this workflow as their
	// parent, ChildrenEnded those of them that have finished or been
	// canceled: the counts its join ("await": {"children": …}) decides on.
	// GetWorkflow and ListWorkflows count the ends as they are; a verb's row
	// (PauseWorkflow, CancelWorkflow, …) carries the count as stored on the
	// parent's row, which may lag behind its children's ends while some run
	// (docs/children.md, "How ends are counted"): read it with GetWorkflow.
	Children      int `db:"children"`
	ChildrenEnded int `db:"children_ended"`
	// FinalStepAt is the earliest instant the workflow's last step can
	// start (geneva.final_step_at): exact when the steps' "after" offsets
	// decide, a lower bound with waits and awaits; nil once it has ended.
	// GetWorkflow and ListWorkflows set it; the verbs (PauseWorkflow,
	// ResumeWorkflow, CancelWorkflow, SkipStep, ScheduleStep) return the row
	// as they left it without it (nil): read it with GetWorkflow.
	FinalStepAt *time.Time `db:"final_step_at"`
}

// workflowColumns are Workflow's columns but final_step_at, which
// readColumns and verbColumns add.
const workflowColumns = `id, workflow_type, hero_type, hero_id, state, current_step_name, next_step_name,
	allow_multiple, requested_action, created_at, updated_at, started_at, transitioned_at, paused_at,
	finished_at, canceled_at, group_name, retried_from, definition_version, started_version, parent_id, root_id, children, children_ended`

// readColumns are Workflow's columns from a read function's rows (in the
// same statement, so of the same snapshot); verbColumns from a verb's, whose
// own writes a function called in the same statement would not see.
const (
	readColumns = workflowColumns + `, geneva.final_step_at(id) as final_step_at`
	verbColumns = workflowColumns + `, null::timestamptz as final_step_at`
)

// StepExecution is a row of geneva.step_executions: one attempt to run one
// step.
type StepExecution struct {
	ID             int64          `db:"id"`
	WorkflowID     int64          `db:"workflow_id"`
	StepName       string         `db:"step_name"`
	State          ExecutionState `db:"state"`
	Outcome        *Outcome       `db:"outcome"` // nil while scheduled or in_progress
	ScheduledFor   time.Time      `db:"scheduled_for"`
	StartedAt      *time.Time     `db:"started_at"`
	CompletedAt    *time.Time     `db:"completed_at"`
	FailedAt       *time.Time     `db:"failed_at"`
	CanceledAt     *time.Time     `db:"canceled_at"`
	SkippedAt      *time.Time     `db:"skipped_at"`
	FinishedAt     *time.Time     `db:"finished_at"`
	ErrorClassName *string        `db:"error_class_name"`
	ErrorMessage   *string        `db:"error_message"`
	ErrorBacktrace *string        `db:"error_backtrace"`
	// ErrorClasses are every class of the error's chain, ErrorClassName
	// first (the worker's errors, as it reported them).
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

// HousekeepParams are thresholds of housekeeping: of one round (Housekeep),
// or new settings (SetHousekeepingSettings, within
// HousekeepingSettingsParams). A field not given (nil, empty, 0) is the
// setting (Housekeep) or leaves it as it is (SetHousekeepingSettings); the
// defaults are SQL's alone (the column defaults of
// geneva.housekeeping_settings).
//
// The durations are pointers so that zero means zero: a pointer to 0 is a
// threshold of 0 (with Go 1.26's new, write Retention:
// new(time.Duration(0)) or StuckScheduledAfter: new(time.Minute)).
type HousekeepParams struct {
	// Retention is how long finished and canceled workflows are kept after
	// they end: 0 deletes every ended workflow; a negative value keeps them
	// forever.
	//
	// Defaults (nil) to the setting, 30 days unless an operator set another.
	Retention *time.Duration
	// StuckInProgressAfter is how long an in_progress execution may go without
	// a sign of life (its start, a checkpoint, a heartbeat) before it counts as
	// stuck (its worker died). Not negative.
	//
	// Defaults (nil) to the setting, 1 hour unless an operator set another.
	StuckInProgressAfter *time.Duration
	// StuckScheduledAfter is how long a scheduled execution of a ready
	// workflow may be overdue before it counts as stuck (its job was lost).
	// Not negative.
	//
	// Defaults (nil) to the setting, 15 minutes unless an operator set
	// another.
	StuckScheduledAfter *time.Duration
	// RecoveryAction is what happens to a stuck execution: RecoveryReattempt
	// (the step runs again) or RecoveryCancel (the workflow is canceled).
	//
	// Defaults (empty) to the setting, RecoveryReattempt unless an operator
	// set another.
	RecoveryAction RecoveryAction
	// BatchSize caps the rows of each kind a round handles; it must be
	// positive.
	//
	// Defaults (0) to the setting, 1000 unless an operator set another.
	BatchSize int
}

// HousekeepingSettingsParams are new housekeeping settings
// (SetHousekeepingSettings): a round's thresholds, and how often rounds run.
// A field not given (nil, empty, 0) leaves its setting as it is.
//
// The round interval is a setting only: one round (Housekeep) has none, so it
// is here rather than in HousekeepParams, where Housekeep would have to
// ignore or refuse it; the compiler keeps it from Housekeep.
type HousekeepingSettingsParams struct {
	HousekeepParams
	// RoundInterval is how long after a round's start the next is due, among
	// all workers (HousekeepIfDue with no interval, as workers call it unless
	// their worker.HousekeepingConfig.Interval says otherwise). Not negative;
	// zero makes every check run a round.
	//
	// Defaults (nil) to the setting, 1 minute unless an operator set another.
	RoundInterval *time.Duration
	// ActionRetention is how long the operators' actions (ActionLog) are
	// kept, apart from the workflows' Retention; never below the floor
	// (ErrInvalidArgument).
	//
	// Defaults (nil) to the setting, 30 days unless an operator set another.
	ActionRetention *time.Duration
	// ActionRetentionFloor is the least ActionRetention may be: actions
	// younger than it are never deleted. Anyone who may set the settings may
	// raise it; only the schema's owner may lower it (a *Error with
	// SQLSTATE 42501 for any other role).
	//
	// Defaults (nil) to the setting, 30 days unless the owner set another.
	ActionRetentionFloor *time.Duration
	// RunawayExecutions is how many executions an ongoing workflow may have
	// before housekeeping flags it as a runaway chain (RunawayWorkflows);
	// RunawayRepeats how many times in a row one step may run. Positive.
	//
	// Default (0) to the settings, 1000 and 100 unless an operator set
	// others.
	RunawayExecutions int
	RunawayRepeats    int
	// PartitionInterval is the width of the history partitions created from
	// now on (docs/history.md): 24 hours or 168 hours (a week, from its
	// Monday); others are ErrInvalidArgument.
	//
	// Defaults (0) to the setting, a day unless an operator set a week.
	PartitionInterval time.Duration
	// MoveAfter is how long an ended workflow stays in the live tables
	// before housekeeping moves it, with its whole tree, into history. Not
	// negative.
	//
	// Defaults (nil) to the setting, 1 hour unless an operator set another.
	MoveAfter *time.Duration
	// Archive is what retention does with an expired history partition:
	// ArchiveDrop, or ArchiveDetach (kept, detached, for `geneva archive`).
	//
	// Defaults ("") to the setting, ArchiveDrop unless an operator set it.
	Archive Archive
}

// Archive is what housekeeping's retention does with an expired history
// partition (HousekeepingSettings.Archive).
type Archive string

const (
	// ArchiveDrop drops the partition: its workflows are gone.
	ArchiveDrop Archive = "drop"
	// ArchiveDetach detaches it and leaves it in schema geneva under its
	// name, for `geneva archive` to write out and drop.
	ArchiveDetach Archive = "detach"
)

// HousekeepingSettings are the thresholds of every worker's housekeeping
// rounds (HousekeepIfDue) and of Housekeep for those it is not given, and how
// often the workers' rounds run: the one
// row of geneva.housekeeping_settings, which only the operator role may set
// (SetHousekeepingSettings, `geneva housekeep settings`).
//
// A setting longer than a time.Duration holds (292 years; the database takes
// up to 1000) reads as 292 years.
type HousekeepingSettings struct {
	// Retention is how long finished and canceled workflows are kept after
	// they end; nil keeps them forever.
	Retention *time.Duration `db:"retention"`
	// StuckInProgressAfter is how long an in_progress execution may go
	// without a sign of life before it is recovered.
	StuckInProgressAfter time.Duration `db:"stuck_in_progress_after"`
	// StuckScheduledAfter is how long a scheduled execution of a ready
	// workflow may be overdue before it is recovered.
	StuckScheduledAfter time.Duration `db:"stuck_scheduled_after"`
	// RecoveryAction is RecoveryReattempt or RecoveryCancel.
	RecoveryAction RecoveryAction `db:"recovery_action"`
	// BatchSize caps the rows of each kind a round handles.
	BatchSize int `db:"batch_size"`
	// RoundInterval is how long after a round's start the next is due, among
	// all workers (HousekeepIfDue with no interval).
	RoundInterval time.Duration `db:"round_interval"`
	// ActionRetention is how long the operators' actions are kept, and
	// ActionRetentionFloor the least it may be (only the schema's owner
	// lowers it): an operator cannot erase the log of what it did.
	ActionRetention      time.Duration `db:"action_retention"`
	ActionRetentionFloor time.Duration `db:"action_retention_floor"`
	// RunawayExecutions and RunawayRepeats are the runaway thresholds
	// (RunawayWorkflows): housekeeping flags an ongoing workflow with more
	// executions, or whose one step ran more times in a row.
	RunawayExecutions int `db:"runaway_executions"`
	RunawayRepeats    int `db:"runaway_repeats"`
	// PartitionInterval is the width of the history partitions (a day or a
	// week), MoveAfter how long an ended workflow stays live before it moves
	// into history, and Archive what retention does with an expired
	// partition (docs/history.md).
	PartitionInterval time.Duration `db:"partition_interval"`
	MoveAfter         time.Duration `db:"move_after"`
	Archive           Archive       `db:"archive"`
	// UpdatedAt and UpdatedBy (the session user) say who last set them; nil
	// when no one did (the defaults).
	UpdatedAt *time.Time `db:"updated_at"`
	UpdatedBy *string    `db:"updated_by"`
}

// HousekeepResult counts what a round of housekeeping did.
type HousekeepResult struct {
	// WorkflowsCleanedUp and StepExecutionsCleanedUp count what the history
	// partitions retention dropped or detached held.
	WorkflowsCleanedUp      int `json:"workflows_cleaned_up"`
	StepExecutionsCleanedUp int `json:"step_executions_cleaned_up"`
	// WorkflowsMoved counts the ended workflows moved from the live tables
	// into history (whole trees, MoveAfter after they ended); not deleted.
	WorkflowsMoved int `json:"workflows_moved"`
	// PartitionsCreated counts the history intervals whose partitions were
	// created ahead; PartitionsDropped and PartitionsDetached those retention
	// dropped, or detached (Archive).
	PartitionsCreated  int `json:"partitions_created"`
	PartitionsDropped  int `json:"partitions_dropped"`
	PartitionsDetached int `json:"partitions_detached"`
	// ActionsCleanedUp counts the operators' actions (geneva.action_log)
	// deleted after the action retention (HousekeepingSettings).
	ActionsCleanedUp int `json:"actions_cleaned_up"`
	// IdempotencyKeysCleanedUp counts create_workflow's idempotency keys
	// deleted once expired.
	IdempotencyKeysCleanedUp int `json:"idempotency_keys_cleaned_up"`
	StuckInProgressRecovered int `json:"stuck_in_progress_recovered"`
	StuckScheduledRecovered  int `json:"stuck_scheduled_recovered"`
	// OrphansRepaired counts workflows whose state had no matching active
	// execution (the view geneva.orphan_workflows).
	OrphansRepaired int `json:"orphans_repaired"`
	// RunawaysFlagged counts the workflows flagged as runaway chains
	// (RunawayWorkflows); they run on.
	RunawaysFlagged int `json:"runaways_flagged"`
	// More is true when a batch was full: another round may find more.
	More bool `json:"more"`
}

// Add adds another round's counts to r (and takes its More).
func (r *HousekeepResult) Add(round *HousekeepResult) {
	r.WorkflowsCleanedUp += round.WorkflowsCleanedUp
	r.StepExecutionsCleanedUp += round.StepExecutionsCleanedUp
	r.WorkflowsMoved += round.WorkflowsMoved
	r.PartitionsCreated += round.PartitionsCreated
	r.PartitionsDropped += round.PartitionsDropped
	r.PartitionsDetached += round.PartitionsDetached
	r.ActionsCleanedUp += round.ActionsCleanedUp
	r.IdempotencyKeysCleanedUp += round.IdempotencyKeysCleanedUp
	r.StuckInProgressRecovered += round.StuckInProgressRecovered
	r.StuckScheduledRecovered += round.StuckScheduledRecovered
	r.OrphansRepaired += round.OrphansRepaired
	r.RunawaysFlagged += round.RunawaysFlagged
	r.More = round.More
}
