package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// Step is what a step function (and a condition, a handler, a hook) sees of
// the execution it runs.
type Step struct {
	// ExecutionID is the step execution's id (geneva.step_executions).
	ExecutionID int64
	// WorkflowID is the workflow's id (geneva.workflows).
	WorkflowID int64
	// WorkflowType is the workflow's type.
	WorkflowType string
	// HeroType and HeroID name the record the workflow is about.
	HeroType string
	HeroID   string
	// Name is the step's name.
	Name string
	// Attempt counts the executions of this step in the workflow, this one
	// included (1 the first time). Zero in conditions, which run before the
	// step starts.
	Attempt int
	// ScheduledFor is when the execution was due.
	ScheduledFor time.Time
	// StartedAt is when the execution started (zero in conditions).
	StartedAt time.Time
	// Cursor is a resumable step's cursor, handed over by Suspend from the
	// execution it continues; nil at first.
	Cursor json.RawMessage
	// IdempotencyKey identifies the work of this execution across a worker's
	// death: the id of the first of the recovered executions it repeats (a
	// worker died, or gave the step back, while the step ran, so its work may
	// be done), else ExecutionID. A step with side effects elsewhere passes
	// it on as their idempotency key (an HTTP step's Geneva-Execution-Id).
	// Zero in conditions.
	IdempotencyKey int64
	// ContinuesFromID is the execution this one continues (a resumable step's
	// predecessor, whose cursor it got); zero when none.
	ContinuesFromID int64
	// Queue is the River queue of the workflow type (empty in conditions).
	Queue string
	// TraceContext is the W3C traceparent the workflow was created with
	// (goclient.CreateWorkflowOpts.TraceContext), empty when none; set with
	// Attempt. For hooks: package otelgeneva links each step's span to it.
	TraceContext string
	// Group is the workflow's group (goclient.CreateWorkflowOpts.Group, the
	// key of limits by group), empty when none (and in conditions); set with
	// Attempt.
	Group string
	// Logger logs with the workflow's type, id and hero and the execution's
	// id and step name.
	Logger *slog.Logger

	// HeroMissing is true when the hero loader (WorkflowOpts.LoadHero) or
	// WorkflowOpts.HeroMissing found the hero gone and the workflow may
	// proceed without it (MayProceedWithoutHero); Hero is nil then.
	HeroMissing bool

	// Precondition is what the preconditions found, set when the
	// preconditions event ends: PreconditionCancel (a cancel_if held),
	// PreconditionSkip (skip_if held), PreconditionHeroMissing (the hero is
	// gone: the workflow is canceled, or, when its type may proceed without
	// it, the step runs), or empty. For hooks.
	Precondition Precondition

	// Outcome is the outcome the worker recorded for the execution (e.g.
	// goclient.OutcomeSuccess), set when the finalize event ends; empty when
	// nothing was recorded. For hooks.
	Outcome goclient.Outcome

	// WorkflowState is the workflow's state after the outcome was recorded,
	// set with Outcome. For hooks.
	WorkflowState goclient.WorkflowState

	// event is the event the execution consumed (Event).
	event *Event
	// hero is what the workflow's hero loader loaded (Hero).
	hero any

	client *protocol.Client
	// exec is the executor running the step (for a resumable step's clock and
	// the worker's stop); iteration is a resumable step's Iteration.
	exec      *executor
	iteration *Iteration
	// http is an HTTP step's endpoint (from the claim); nil for a Go step.
	// httpErr is what was wrong with it, if anything.
	http    *httpSpec
	httpErr error
	// replyCursor and replyWait are an HTTP step's reply's cursor and wait
	// (JSON; nil for none), recorded in the same call as the step's end
	// (geneva.complete_steps' p_replies).
	replyCursor, replyWait json.RawMessage
	// children are the children the step starts with its success
	// (StartChildren), guarded by childrenMu.
	children   []Child
	childrenMu sync.Mutex
	// inputErr says a JSON value of the claim (cursor, event payload, http)
	// cannot be decoded: the step does not run, and fails with it.
	inputErr *UndecodableInputError
	// tx is a transactional step's transaction while it runs (Tx).
	tx pgx.Tx
}

// Tx is a transactional step's transaction (StepOpts.Transactional), begun
// on the worker's DB before the step starts and valid while it runs (in its
// function and its EventStep hooks): what the step writes on it commits with
// the record of the step's end, or not at all. The step must not commit or
// roll it back itself (it then fails with a *TransactionError). Tx panics
// (a *PanicError for the step) when the step is not transactional, or
// outside its run (in a condition, a handler, after it returned).
func (s *Step) Tx() pgx.Tx {
	if s.tx == nil {
		panic(fmt.Sprintf("geneva: Step.Tx called outside the run of a transactional step (step %s of %s; see StepOpts.Transactional)", s.Name, s.WorkflowType))
	}
	return s.tx
}

// Checkpoint saves a step's cursor (any value that marshals to JSON) at
// once: the plumbing under Workflow.ResumableStep, whose Iteration is the
// easier way (budgets, cheap checks, hand-over). It returns true when the step should stop now because an operator
// asked the workflow to pause or cancel: return Suspend(0) then, and the
// successor execution, if any, continues from the cursor.
func (s *Step) Checkpoint(ctx context.Context, cursor any) (stop bool, err error) {
	raw, err := json.Marshal(cursor)
	if err != nil {
		return false, fmt.Errorf("geneva: checkpoint: %w", err)
	}
	if s.client == nil {
		return false, fmt.Errorf("geneva: checkpoint outside a running step")
	}
	if s.tx != nil {
		return false, fmt.Errorf("geneva: checkpoint in a transactional step (its writes commit only with its end; a cursor must commit while it runs)")
	}
	stop, err = s.client.CheckpointStep(ctx, s.ExecutionID, raw)
	if err == nil && s.iteration != nil {
		s.iteration.saved(raw)
	}
	return stop, err
}

// HookEvent names what a Hook wraps. (An event sent to a workflow, which a
// step awaits, is an Event.)
type HookEvent string

const (
	// EventPreconditions wraps the hero check, the cancel_if and skip_if
	// conditions and geneva.start_steps.
	EventPreconditions HookEvent = "preconditions"
	// EventStep wraps the step function.
	EventStep HookEvent = "step"
	// EventFinalize wraps the recording of the step's outcome (with the River
	// job's completion, in one transaction).
	EventFinalize HookEvent = "finalize"
)

// Hook wraps one event of a step's run, for instrumentation: start a span or
// a timer, call next, record what it returned. A hook must call next once and
// return its error (or wrap it).
//
// What the hooks return is the step's error for EventStep (a hook may
// translate errors); a hook that does not call next fails the step. For
// EventPreconditions and EventFinalize the executor acts on what next found,
// whatever the hooks return, and runs next itself, logging an error, when a
// hook did not. A hook that panics returns a *PanicError.
//
//	func timing(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
//		start := time.Now()
//		err := next(ctx)
//		stepSeconds.WithLabelValues(step.WorkflowType, step.Name, string(event)).Observe(time.Since(start).Seconds())
//		return err
//	}
type Hook func(ctx context.Context, event HookEvent, step *Step, next func(ctx context.Context) error) error

// runHooks runs f inside the hooks, the first outermost. A hook that panics
// returns a *PanicError.
func runHooks(ctx context.Context, hooks []Hook, event HookEvent, step *Step, f func(context.Context) error) (err error) {
	if len(hooks) == 0 {
		return f(ctx)
	}
	defer recoverInto(&err)
	return hooks[0](ctx, event, step, func(ctx context.Context) error {
		return runHooks(ctx, hooks[1:], event, step, f)
	})
}
