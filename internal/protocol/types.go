package protocol

import (
	"encoding/json"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// CompleteReport is one running step's end, for CompleteSteps: what one
// CompleteStep call takes, or with Interrupt one InterruptStep call, or
// with Failure one FailStep call (of a running step's error).
type CompleteReport struct {
	// ExecutionID is the execution that ended.
	ExecutionID int64
	// Signal is how it ended (without Interrupt or Failure).
	Signal Signal
	// Wait applies to SignalReattempt, SignalReattemptRewind and
	// SignalSuspend; zero for none.
	Wait time.Duration
	// JobID and Continue are ReportOpts' (zero for none, false).
	JobID    int64
	Continue bool
	// Interrupt gives the step back (geneva.interrupt_step's end).
	Interrupt bool
	// Failure is the step's error (geneva.fail_step's end; not a
	// precondition's), with a handler's decision once asked for: the
	// result's Action is then "handler" and nothing is recorded until it is
	// reported again with the decision. Its JobID and Precondition are not
	// read.
	Failure *Failure
	// ReplyCursor and ReplyWait are an HTTP step's reply's cursor and wait,
	// as JSON (nil for none), recorded in the same call as the end: the
	// cursor is saved as the step ends (as CheckpointStep would just
	// before), the wait read by SQL as ParseWait reads it, the report's
	// wait when its signal takes one (Wait is then not read). A wait that is
	// none (ParseWait's error) refuses the report: goclient.ErrInvalidArgument.
	ReplyCursor json.RawMessage
	ReplyWait   json.RawMessage
	// Children are the children the step starts with its end (a JSON list
	// of objects of type, hero_type, hero_id, group and key; nil for none),
	// created in the same call when it ends with success (success or
	// finished), else not at all. Children refused (an unknown type, an
	// empty hero) refuse the report: goclient.ErrInvalidArgument.
	Children json.RawMessage
}

// Execution is an execution for the worker to run, as SQL started it: a
// row of geneva.start_steps, or the next execution geneva.complete_steps
// started for the same job (StepResult.Next): the next step of the same
// workflow, or a waiter of another workflow of the same type that took the
// slot of a limit the step before it freed. The latter leaves Queue empty
// (it is the queue of the step that ran before it) and its ScheduledFor is
// its StartedAt.
type Execution struct {
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
	// Queue is the River queue of the step's jobs: the workflow type's, or
	// an HTTP step's own.
	Queue string `db:"queue"`
	// TraceContext is the W3C traceparent the workflow was created with
	// (goclient.CreateWorkflowOpts.TraceContext); empty when none.
	TraceContext *string `db:"trace_context"`
	// EventID, EventName, EventPayload, EventSentAt and EventSentBy (the
	// role that sent it: its session_user) are the event the execution
	// consumed (a step that awaits one) or carries from the execution it
	// repeats; nil when none.
	EventID      *int64          `db:"event_id"`
	EventName    *string         `db:"event_name"`
	EventPayload json.RawMessage `db:"event_payload"`
	EventSentAt  *time.Time      `db:"event_sent_at"`
	EventSentBy  *string         `db:"event_sent_by"`
	// Group is the workflow's group (goclient.CreateWorkflowOpts.Group); nil
	// when none.
	Group *string `db:"group_name"`
	// HTTP is the step's "http" in the current definition (its endpoint,
	// timeout, headers and queue) when it is an HTTP step; nil for a step a
	// Go worker runs.
	HTTP json.RawMessage `db:"http"`
	// IdempotencyKey is the first execution of the recovered ones this one
	// repeats (a worker died or gave the step back while it ran), else the
	// execution's own id. Nil for an execution complete_steps started (its
	// own id: SQL starts a repeat of a recovered one only by a claim).
	IdempotencyKey *int64 `db:"idempotency_key"`
	// Undecodable, when not nil, says that one of the JSON values above
	// (Cursor, EventPayload, HTTP) is not JSON encoding/json reads, and is
	// left nil: the execution is started all the same, and the worker must
	// record Undecodable as its failure rather than run its step.
	Undecodable *UndecodableError `db:"-"`
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
	// WaitAtLeast is the least wait the error asks of a reattempt (an HTTP
	// step's Retry-After); zero for none.
	WaitAtLeast time.Duration
}

// FailResult is what FailStep decided.
type FailResult struct {
	// Action is what was applied: pause, cancel, skip, reattempt, finished; or
	// "handler" when the handler named by Handler must decide first (call
	// FailStep again with its decision). Nil when nothing was recorded.
	Action *string `db:"action"`
	// Outcome is the execution's outcome, or nil when nothing was recorded
	// (the execution had moved on, or its workflow is paused).
	Outcome *goclient.Outcome `db:"outcome"`
	// Report tells whether the error should be reported, per the policy.
	Report bool `db:"report"`
	// WorkflowState is the workflow's state afterwards.
	WorkflowState goclient.WorkflowState `db:"workflow_state"`
	// Handler names the handler the policy gives, if any.
	Handler *string `db:"handler"`
}

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

// ReportOpts are options for CompleteStep and InterruptStep.
type ReportOpts struct {
	// JobID is the River job the worker ran for the execution: SQL completes
	// it in the same transaction as the outcome.
	//
	// Defaults to none.
	JobID int64

	// Continue offers to run the next execution in the same job
	// (CompleteStep only: geneva.complete_and_continue's behaviour): when
	// it is due now and has no cancel_if or skip_if to evaluate first, SQL
	// starts it and returns it as StepResult.Next.
	// Offer it only when the workflow has no condition SQL cannot see (a
	// hero check).
	//
	// Defaults to false: the next execution gets a River job.
	Continue bool
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

// Signals are every signal geneva.complete_step accepts (a test holds them
// to it).
var Signals = []Signal{
	SignalSuccess, SignalFinished, SignalReattempt, SignalReattemptRewind,
	SignalSkip, SignalCancel, SignalPause, SignalSuspend,
}

// StepResult is what CompleteStep and InterruptStep recorded.
type StepResult struct {
	// Outcome is the execution's outcome, or nil when nothing was recorded
	// because the execution had moved on (e.g. housekeeping recovered it).
	Outcome *goclient.Outcome `db:"outcome"`
	// WorkflowState is the workflow's state afterwards.
	WorkflowState goclient.WorkflowState `db:"workflow_state"`
	// Next is the execution CompleteStep started for the worker to run at
	// once (ReportOpts.Continue), or nil.
	Next *Execution `db:"-"`
	// Action, Report and Handler are FailResult's, for a report with a
	// Failure (nil, false, nil otherwise).
	Action  *string `db:"-"`
	Report  bool    `db:"-"`
	Handler *string `db:"-"`
}
