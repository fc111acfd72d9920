package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// StepArgs are the arguments of the River job that triggers a step execution.
// PL/pgSQL inserts these jobs (kind "geneva_step") when it schedules a step;
// besides the execution's id they carry the facts conditions need, so that
// they run without a read.
type StepArgs struct {
	ExecutionID  int64  `json:"execution_id"`
	WorkflowID   int64  `json:"workflow_id"`
	WorkflowType string `json:"workflow_type"`
	HeroType     string `json:"hero_type"`
	HeroID       string `json:"hero_id"`
	StepName     string `json:"step_name"`
}

// Kind is the River job kind of step executions.
func (StepArgs) Kind() string { return "geneva_step" }

// DB is what the executor runs SQL on: a *pgxpool.Pool, or a *pgx.Conn (the
// test helpers use one with geneva.fake_now set).
type DB interface {
	goclient.DB
	Begin(ctx context.Context) (pgx.Tx, error)
}

// executor runs step executions: the preconditions, geneva.start_step, the
// step function, and the one SQL call that records what happened. It decides
// nothing about the workflow's state: SQL does.
type executor struct {
	registry    registry
	hooks       []Hook
	logger      *slog.Logger
	report      func(ctx context.Context, step *Step, err error)
	stepTimeout time.Duration
	// heartbeat is how often a running step's execution is touched
	// (geneva.heartbeat_step); zero for none (the runner's single connection
	// cannot be shared with a heartbeat).
	heartbeat time.Duration
	// inlineSteps is how many next steps one job may run (zero for the
	// runner, whose Perform runs one execution).
	inlineSteps int
	// stopping ends inline runs at the next step boundary, so that a worker's
	// graceful stop does not wait for whole workflows.
	stopping atomic.Bool
	// clock measures resumable steps' MaxRuntime (Config.Clock).
	clock func() time.Time
	// recordUntilStopped keeps trying to record an outcome while the
	// database does not answer, until the worker stops hard (a Worker's; a
	// Runner gives up after finalizeAttempts).
	recordUntilStopped bool
}

// phase is what a finalize records the end of.
type phase int

const (
	phaseStep         phase = iota // the step function ran
	phasePrecondition              // a condition failed before the step started
	phaseInterrupted               // a shutdown cut the step off
)

// newExecutor makes the executor of a worker or a runner from its config.
func newExecutor(config *Config) (*executor, error) {
	if config == nil {
		config = &Config{}
	}
	if config.StepTimeout < 0 {
		return nil, fmt.Errorf("geneva: negative StepTimeout %s", config.StepTimeout)
	}
	reg, err := newRegistry(config.Workflows)
	if err != nil {
		return nil, fmt.Errorf("geneva: %w", err)
	}
	logger := config.Logger
	if logger == nil {
		logger = slog.Default()
	}
	// (without a reporter, the "step failed" line at the error level is the
	// report: see finalize)
	report := config.ErrorReporter
	return &executor{
		registry:    reg,
		hooks:       config.Hooks,
		logger:      logger,
		report:      report,
		stepTimeout: config.StepTimeout,
		clock:       config.Clock,
	}, nil
}

// NotHereError is what perform returns for a job whose workflow type or step
// this worker's definitions lack while the database's definition has it: a
// deploy is under way and a newer worker should run it. The worker gives the
// job back to River for later (a snooze).
type NotHereError struct {
	WorkflowType string
	StepName     string
}

func (e *NotHereError) Error() string {
	return fmt.Sprintf("geneva: this worker does not define step %s of workflow type %s, which the database does", e.StepName, e.WorkflowType)
}

// finalizeAttempts is how many times the outcome's transaction is tried before
// the execution is left in_progress for housekeeping to recover, when trying
// longer is not called for (see recordWithRetries).
const finalizeAttempts = 5

// perform runs one step execution on db. jobID, when not zero, is the River
// job being worked: SQL completes it in the transaction that records the
// outcome. An error means nothing was recorded and the job should be retried.
func (e *executor) perform(ctx context.Context, db DB, args StepArgs, jobID int64) error {
	client := protocol.New(db)
	wf := e.registry[args.WorkflowType]
	if wf == nil || wf.step(args.StepName) == nil {
		defined, err := client.StepDefined(ctx, args.WorkflowType, args.StepName)
		if err != nil {
			return fmt.Errorf("geneva: looking up step %s of %s: %w", args.StepName, args.WorkflowType, err)
		}
		if defined {
			return &NotHereError{WorkflowType: args.WorkflowType, StepName: args.StepName}
		}
		// Defined nowhere: start_step records it (failed/step_not_defined).
		if wf == nil {
			wf = &registeredWorkflow{Workflow: &Workflow{workflowType: args.WorkflowType}}
		}
	}

	step := e.newStep(client, args)

	// The hooks see each event's result; what the executor acts on is what
	// the event's own function captured, whatever a hook returns.
	var (
		started      *protocol.StartedStep
		conditionErr error
		startErr     error
	)
	e.event(ctx, EventPreconditions, step, func(ctx context.Context) error {
		var precondition protocol.Precondition
		precondition, conditionErr = e.preconditions(ctx, wf, step)
		if conditionErr != nil {
			return conditionErr
		}
		step.Precondition = string(precondition)
		started, startErr = client.StartStep(ctx, step.ExecutionID, precondition)
		if started != nil {
			// set here so that the hooks see that the step started
			step.Attempt = started.Attempt
			step.ScheduledFor = started.ScheduledFor
			step.StartedAt = started.StartedAt
			step.Queue = started.Queue
			step.TraceContext = deref(started.TraceContext)
		}
		return startErr
	})
	if conditionErr != nil && ctx.Err() != nil {
		// cut off by a shutdown: record nothing, the job runs again
		return fmt.Errorf("geneva: preconditions of execution %d: %w", step.ExecutionID, ctx.Err())
	}
	if errors.Is(startErr, goclient.ErrNotFound) {
		// deleted with its workflow (housekeeping's retention) before its job ran
		step.Logger.WarnContext(ctx, "geneva: the execution no longer exists")
		return nil
	}
	if startErr != nil {
		return fmt.Errorf("geneva: starting execution %d: %w", step.ExecutionID, startErr)
	}
	if conditionErr != nil {
		return e.finalize(ctx, db, &recording{wf: wf, step: step, err: conditionErr, phase: phasePrecondition, jobID: jobID})
	}
	if started == nil {
		if step.Precondition != "" {
			step.Logger.InfoContext(ctx, "geneva: step not run", slog.String("precondition", step.Precondition))
		} else {
			step.Logger.DebugContext(ctx, "geneva: nothing to run (duplicate, early or late job, or paused workflow)")
		}
		return nil
	}

	step.Cursor = started.Cursor
	step.ContinuesFromID = deref(started.ContinuesFromID)

	// Run the step, then each next step SQL starts for this job (see
	// Config.InlineSteps).
	for inline := 0; ; inline++ {
		step.Logger = step.Logger.With(slog.Int("attempt", step.Attempt))
		offer := inline < e.inlineSteps && wf.opts.HeroMissing == nil
		next, err := e.runStarted(ctx, db, wf, step, jobID, offer)
		if err != nil || next == nil {
			return err
		}

		jobID = 0 // completed with the first step; the next ones have none
		args := StepArgs{
			ExecutionID:  next.ExecutionID,
			WorkflowID:   step.WorkflowID,
			WorkflowType: step.WorkflowType,
			HeroType:     step.HeroType,
			HeroID:       step.HeroID,
			StepName:     next.StepName,
		}
		queue, traceContext := step.Queue, step.TraceContext
		step = e.newStep(client, args)
		step.Queue, step.TraceContext = queue, traceContext // the workflow's
		step.Attempt = next.Attempt
		step.ScheduledFor = next.StartedAt
		step.StartedAt = next.StartedAt
		step.Cursor = next.Cursor
		step.ContinuesFromID = deref(next.ContinuesFromID)
		// SQL started it: nothing to check, but hooks see every step's events
		e.event(ctx, EventPreconditions, step, func(context.Context) error { return nil })
		if wf.step(step.Name) == nil {
			// defined in the database only (a deploy in progress): give it back
			step.Logger.WarnContext(ctx, "geneva: the next step is not defined in this worker; giving it back", slog.Int("attempt", step.Attempt))
			return e.finalize(ctx, db, &recording{wf: wf, step: step, err: &NotHereError{WorkflowType: step.WorkflowType, StepName: step.Name}, phase: phaseInterrupted})
		}
		if err := ctx.Err(); err != nil {
			// the worker stopped hard while the last step was recorded: give
			// this one back rather than start it on a dead context
			return e.finalize(ctx, db, &recording{wf: wf, step: step, err: err, phase: phaseInterrupted})
		}
	}
}

// runStarted runs a started execution's step and records how it ended. When
// offer is true and SQL starts the next step for this job, it returns it.
func (e *executor) runStarted(ctx context.Context, db DB, wf *registeredWorkflow, step *Step, jobID int64, offer bool) (*protocol.NextStep, error) {
	stepCtx := ctx
	if e.stepTimeout > 0 {
		var cancel context.CancelFunc
		stepCtx, cancel = context.WithTimeout(ctx, e.stepTimeout)
		defer cancel()
	}
	stopHeartbeat := e.startHeartbeat(ctx, step.client, step)
	ran := false
	stepErr := runHooks(stepCtx, e.hooks, EventStep, step, func(ctx context.Context) error {
		ran = true
		return callStep(ctx, wf.step(step.Name), step)
	})
	stopHeartbeat()
	if step.iteration != nil {
		// a resumable step's last cursor is written before its end is
		// recorded: the step runs again from it after an error or a signal,
		// and the history shows where each execution got to
		if err := step.iteration.flush(ctx); err != nil {
			step.Logger.WarnContext(ctx, "geneva: saving the cursor failed", slog.String("error", err.Error()))
		}
	}
	if !ran && stepErr == nil {
		stepErr = errors.New("geneva: a hook did not run the step (it must call next)")
	}

	rec := &recording{wf: wf, step: step, err: checkFlowControl(stepErr), phase: phaseStep, jobID: jobID, offer: offer}
	// The job's context is canceled only when the worker stops hard (River's
	// StopAndCancel) or the job is canceled: give the step back rather than
	// fail it. A step timeout cancels only the step's context.
	if stepErr != nil && errors.Is(ctx.Err(), context.Canceled) {
		rec.phase = phaseInterrupted
	}
	if ctx.Err() != nil || e.stopping.Load() {
		rec.offer = false
	}
	err := e.finalize(ctx, db, rec)
	return rec.next, err
}

// newStep is the Step of an execution, before it starts.
func (e *executor) newStep(client *protocol.Client, args StepArgs) *Step {
	return &Step{
		ExecutionID:  args.ExecutionID,
		WorkflowID:   args.WorkflowID,
		WorkflowType: args.WorkflowType,
		HeroType:     args.HeroType,
		HeroID:       args.HeroID,
		Name:         args.StepName,
		Logger: e.logger.With(
			slog.String("workflow_type", args.WorkflowType),
			slog.Int64("workflow_id", args.WorkflowID),
			slog.String("hero_type", args.HeroType),
			slog.String("hero_id", args.HeroID),
			slog.Int64("execution_id", args.ExecutionID),
			slog.String("step_name", args.StepName),
		),
		client: client,
		exec:   e,
	}
}

// event runs f inside the hooks, and runs it anyway (logging the mistake)
// when a hook did not call next: the executor must not lose a step's
// progress to a hook.
func (e *executor) event(ctx context.Context, event Event, step *Step, f func(context.Context) error) {
	ran := false
	err := runHooks(ctx, e.hooks, event, step, func(ctx context.Context) error {
		ran = true
		return f(ctx)
	})
	if !ran {
		step.Logger.ErrorContext(ctx, "geneva: a hook did not call next; running the event anyway",
			slog.String("event", string(event)), slog.Any("hook_error", err))
		_ = f(ctx)
	}
}

// startHeartbeat touches the execution every e.heartbeat while its step runs,
// so that housekeeping does not recover a long step as if its worker had
// died. The returned function stops it and waits for it.
func (e *executor) startHeartbeat(ctx context.Context, client *protocol.Client, step *Step) func() {
	if e.heartbeat <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		ticker := time.NewTicker(e.heartbeat)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			running, err := client.HeartbeatStep(ctx, step.ExecutionID)
			switch {
			case err != nil && ctx.Err() == nil:
				step.Logger.WarnContext(ctx, "geneva: heartbeat failed", slog.String("error", err.Error()))
			case err == nil && !running:
				step.Logger.WarnContext(ctx, "geneva: the execution was ended while its step ran (recovered by housekeeping?); its outcome will not be recorded")
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// preconditions runs the hero check, the workflow's cancel_if conditions and
// the step's skip_if, in that order, and says which held. A condition may
// return Cancel() or Skip() instead of a result; those decide as a cancel_if
// or a skip_if that holds.
func (e *executor) preconditions(ctx context.Context, wf *registeredWorkflow, step *Step) (protocol.Precondition, error) {
	if wf.opts.HeroMissing != nil {
		found, err := evalCondition(ctx, "hero_missing", wf.opts.HeroMissing, protocol.PreconditionHeroMissing, step)
		switch {
		case err != nil || found == protocol.PreconditionCancel || found == protocol.PreconditionSkip:
			return found, err
		case found == protocol.PreconditionHeroMissing && !wf.opts.MayProceedWithoutHero:
			return found, nil
		case found == protocol.PreconditionHeroMissing:
			step.HeroMissing = true // and the other conditions still apply
		}
	}
	for _, cond := range wf.cancelIf {
		found, err := evalCondition(ctx, "cancel_if "+cond.name, cond.fn, protocol.PreconditionCancel, step)
		if err != nil || found != protocol.PreconditionNone {
			return found, err
		}
	}
	// (an undefined step is left to start_step, which records it)
	if def := wf.step(step.Name); def != nil && def.opts.SkipIf != nil {
		return evalCondition(ctx, "skip_if", def.opts.SkipIf, protocol.PreconditionSkip, step)
	}
	return protocol.PreconditionNone, nil
}

// evalCondition runs one condition; holds is what it means when it returns
// true.
func evalCondition(ctx context.Context, name string, cond Condition, holds protocol.Precondition, step *Step) (protocol.Precondition, error) {
	result, err := callCondition(ctx, cond, step)
	if flow, ok := asFlowControl(err); ok {
		switch flow.Signal {
		case SignalCancel:
			return protocol.PreconditionCancel, nil
		case SignalSkip:
			return protocol.PreconditionSkip, nil
		}
		err = fmt.Errorf("geneva: a condition returned flow control %q; only Cancel and Skip decide a condition", flow.Signal)
	}
	if err != nil {
		return protocol.PreconditionNone, &ConditionError{Condition: name, Err: err}
	}
	if result {
		return holds, nil
	}
	return protocol.PreconditionNone, nil
}

// ConditionError is the error of a condition (a hero check, a cancel_if, a
// skip_if) that failed; it goes through the step's exception policies like a
// step's error, and matchers see through it to Err.
type ConditionError struct {
	// Condition names the condition: "hero_missing", "cancel_if <name>" or
	// "skip_if".
	Condition string
	// Err is the condition's error.
	Err error
}

func (e *ConditionError) Error() string { return e.Condition + ": " + errorMessage(e.Err) }

// Unwrap returns the condition's error.
func (e *ConditionError) Unwrap() error { return e.Err }

// checkFlowControl turns a flow-control value with a signal a step cannot give
// into an error (which goes through the exception policies).
func checkFlowControl(err error) error {
	flow, ok := asFlowControl(err)
	if !ok || slices.Contains([]Signal{
		SignalSuccess, SignalFinished, SignalReattempt, SignalSkip,
		SignalCancel, SignalPause, SignalSuspend, SignalReattemptRewind,
	}, flow.Signal) {
		return err
	}
	return fmt.Errorf("geneva: a step returned flow control with an unknown signal %q", flow.Signal)
}

// flowWait is the wait SQL takes with a signal: only reattempt (rewinding or
// not) and suspend wait, never less than nothing.
func flowWait(flow *FlowControl) time.Duration {
	if flow.Wait < 0 || (flow.Signal != SignalReattempt && flow.Signal != SignalSuspend &&
		flow.Signal != SignalReattemptRewind) {
		return 0
	}
	return min(flow.Wait, LongestWait)
}

// recording is one step's end, as finalize records it. A handler's decision
// is kept, so that retrying the transaction does not run the handler again.
type recording struct {
	wf    *registeredWorkflow
	step  *Step
	err   error
	phase phase
	jobID int64

	// offer asks SQL to start the next step for this job
	// (geneva.complete_and_continue); next is the step it started.
	offer bool
	next  *protocol.NextStep

	failure *protocol.Failure
}

// recorded is what SQL recorded: the outcome (nil when the execution had moved
// on), the workflow's state after it, and whether to report the error.
type recorded struct {
	outcome       *string
	workflowState goclient.WorkflowState
	report        bool
}

// finalize records what happened with one SQL call, which completes the River
// job in the same transaction, then reports the error when SQL says so. It
// tries again while the database fails (see recordWithRetries); when it gives
// up the execution stays in_progress until housekeeping recovers it.
func (e *executor) finalize(ctx context.Context, db DB, rec *recording) error {
	// The step's context may be canceled (a timeout, a shutdown): record the
	// outcome anyway. stop ends only when the worker stops hard.
	stop := ctx
	ctx = context.WithoutCancel(ctx)

	step := rec.step
	var (
		result    *recorded
		recordErr error
	)
	e.event(ctx, EventFinalize, step, func(ctx context.Context) error {
		result, recordErr = e.recordWithRetries(ctx, stop, protocol.New(db), rec)
		if recordErr == nil {
			step.Outcome, step.WorkflowState = deref(result.outcome), result.workflowState
		}
		return recordErr
	})
	if recordErr != nil {
		return fmt.Errorf("geneva: recording the outcome of execution %d: %w", step.ExecutionID, recordErr)
	}

	logAttrs := []any{slog.String("outcome", step.Outcome)}
	_, isFlow := asFlowControl(rec.err)
	switch {
	case result.outcome == nil && rec.next != nil:
		// an earlier try committed but its reply was lost; SQL hands over
		// the step that try started
		step.Logger.InfoContext(ctx, "geneva: step ended (recorded by an earlier try)")
	case result.outcome == nil:
		step.Logger.WarnContext(ctx, "geneva: outcome not recorded: the execution had moved on", logAttrs...)
	case rec.err == nil || isFlow || rec.phase == phaseInterrupted:
		step.Logger.InfoContext(ctx, "geneva: step ended", logAttrs...)
	default:
		step.Logger.Log(ctx, failureLevel(step.Outcome, result.report), "geneva: step failed",
			append(logAttrs, slog.String("error", errorMessage(rec.err)), slog.Bool("reported", result.report))...)
	}
	if result.report && e.report != nil {
		func() {
			defer func() {
				if r := recover(); r != nil {
					step.Logger.ErrorContext(ctx, "geneva: the error reporter panicked", slog.Any("panic", r))
				}
			}()
			e.report(ctx, step, rec.err)
		}()
	}
	return nil
}

// failureLevel is the level a step's error is logged at, per what its
// exception policy decided: the error level when the error is reported or
// the outcome is terminal (the workflow paused or canceled by the exception,
// reattempts exhausted, the step no longer defined); else (reattempted or
// skipped, and not reported) the warning level.
func failureLevel(outcome string, reported bool) slog.Level {
	switch {
	case reported:
		return slog.LevelError
	case outcome == "reattempted_by_exception" || outcome == "skipped_by_exception":
		return slog.LevelWarn
	}
	return slog.LevelError
}

// recordWithRetries tries record until it succeeds or the database refuses
// the arguments (trying again would not help), waiting longer each time (see
// recordBackoff); each try has recordTryTimeout. While the database does not
// answer (down, restarting, unreachable, out of connections; see
// databaseUnavailable) a worker keeps the outcome and keeps trying, for as
// long as it takes, heartbeating the execution meanwhile where it can; it
// gives up after finalizeAttempts tries only when stop ends (the worker stops
// hard), when the database answers with another error, or in a Runner.
func (e *executor) recordWithRetries(ctx, stop context.Context, client *protocol.Client, rec *recording) (*recorded, error) {
	var stopHeartbeat func()
	defer func() {
		if stopHeartbeat != nil {
			stopHeartbeat()
		}
	}()
	for attempt := 1; ; attempt++ {
		tryCtx, cancel := context.WithTimeout(ctx, recordTryTimeout)
		result, err := e.record(tryCtx, client, rec)
		cancel()
		if err == nil || errors.Is(err, goclient.ErrInvalidArgument) {
			return result, err
		}
		persist := e.recordUntilStopped && databaseUnavailable(err)
		if attempt >= finalizeAttempts && (!persist || stop.Err() != nil) {
			return nil, err
		}
		if persist && stopHeartbeat == nil && rec.phase != phasePrecondition {
			// the step's own heartbeat has stopped; housekeeping must not
			// take it for dead while its outcome waits
			heartbeatCtx, cancelHeartbeat := context.WithCancel(stop)
			stopBeating := e.startHeartbeat(heartbeatCtx, client, rec.step)
			stopHeartbeat = func() { cancelHeartbeat(); stopBeating() }
		}
		wait := recordBackoff(attempt)
		rec.step.Logger.WarnContext(ctx, "geneva: recording the outcome failed; trying again",
			slog.Int("try", attempt), slog.Duration("wait", wait), slog.String("error", err.Error()))
		// a hard stop during the wait ends it: the remaining tries go at once
		var stopped <-chan struct{}
		if stop.Err() == nil {
			stopped = stop.Done()
		}
		timer := time.NewTimer(wait)
		select {
		case <-stopped:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// record makes the one SQL call that records the step's end (and completes
// the River job). A handler policy takes a second call: the first records
// nothing and asks for the handler's decision.
func (e *executor) record(ctx context.Context, client *protocol.Client, rec *recording) (*recorded, error) {
	opts := &protocol.ReportOpts{JobID: rec.jobID, Continue: rec.offer}
	var (
		result *protocol.StepResult
		err    error
	)
	flow, isFlow := asFlowControl(rec.err)
	switch {
	case rec.phase == phasePrecondition:
		return e.recordFailure(ctx, client, rec, true)
	case rec.phase == phaseInterrupted:
		result, err = client.InterruptStep(ctx, rec.step.ExecutionID, opts)
	case rec.err == nil:
		result, err = client.CompleteStep(ctx, rec.step.ExecutionID, protocol.SignalSuccess, 0, opts)
	case isFlow:
		result, err = client.CompleteStep(ctx, rec.step.ExecutionID, protocol.Signal(flow.Signal), flowWait(flow), opts)
	default:
		return e.recordFailure(ctx, client, rec, false)
	}
	if err != nil {
		return nil, err
	}
	rec.next = result.Next
	return &recorded{outcome: result.Outcome, workflowState: result.WorkflowState}, nil
}

// recordFailure records a step's error: SQL resolves the policy; when it
// names a handler, the handler decides and SQL is told its decision.
func (e *executor) recordFailure(ctx context.Context, client *protocol.Client, rec *recording, precondition bool) (*recorded, error) {
	if rec.failure == nil {
		rec.failure = &protocol.Failure{
			Classes:      errorClasses(rec.wf, rec.err),
			Chain:        errorChain(rec.err),
			Message:      errorMessage(rec.err),
			Backtrace:    backtrace(rec.err),
			Precondition: precondition,
			JobID:        rec.jobID,
		}
	}
	result, err := client.FailStep(ctx, rec.step.ExecutionID, rec.failure)
	if err != nil {
		return nil, err
	}
	if deref(result.Action) == "handler" {
		rec.failure.HandlerSignal, rec.failure.HandlerWait = e.decide(ctx, rec.wf, rec.step, deref(result.Handler), rec.err)
		if result, err = client.FailStep(ctx, rec.step.ExecutionID, rec.failure); err != nil {
			return nil, err
		}
	}
	return &recorded{outcome: result.Outcome, workflowState: result.WorkflowState, report: result.Report}, nil
}

// decide runs an imperative handler and returns its decision; a handler that
// decides nothing (or something else than reattempt, skip, cancel, pause or
// finished), fails or panics pauses the workflow.
func (e *executor) decide(ctx context.Context, wf *registeredWorkflow, step *Step, name string, stepErr error) (protocol.Signal, time.Duration) {
	handler := wf.handlers[name]
	if handler == nil {
		step.Logger.ErrorContext(ctx, "geneva: the policy's handler is not in this worker's definition; pausing", slog.String("handler", name))
		return protocol.SignalPause, 0
	}
	decision := callHandler(ctx, handler, step, stepErr)
	flow, ok := asFlowControl(decision)
	if !ok || !slices.Contains([]Signal{
		SignalReattempt, SignalSkip, SignalCancel, SignalPause, SignalFinished,
	}, flow.Signal) {
		if decision != nil {
			step.Logger.WarnContext(ctx, "geneva: the exception handler decided nothing usable; pausing", slog.String("decision", errorMessage(decision)))
		}
		return protocol.SignalPause, 0
	}
	return protocol.Signal(flow.Signal), flowWait(flow)
}

// errorClasses are the names SQL matches exception policies against: the
// type names in err's chain, outermost first, then the names of the
// workflow's matchers that match err.
func errorClasses(wf *registeredWorkflow, err error) []string {
	classes := errorTypeNames(err)
	for _, matcher := range wf.matchers {
		name := matcher.MatcherName()
		if !slices.Contains(classes, name) && safeMatch(matcher, err) {
			classes = append(classes, name)
		}
	}
	return classes
}

// backtrace is a panic's stack, or the detailed form of errors that print
// one with %+v.
func backtrace(err error) string {
	var panicErr *PanicError
	if errors.As(err, &panicErr) {
		return string(panicErr.Stack)
	}
	detailed := safeString(func() string { return fmt.Sprintf("%+v", err) })
	if detailed != errorMessage(err) {
		return detailed
	}
	return ""
}

// errorMessage is err's message, even for an error whose Error method panics
// (a typed nil pointer, say).
func errorMessage(err error) string {
	if err == nil {
		return ""
	}
	return safeString(err.Error)
}

func safeString(f func() string) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("(panic while printing the error: %v)", r)
		}
	}()
	return f()
}

// safeMatch is matcher.MatchError; a matcher that panics does not match.
func safeMatch(matcher Matcher, err error) (matched bool) {
	defer func() {
		if recover() != nil {
			matched = false
		}
	}()
	return matcher.MatchError(err)
}

// callStep runs a step function, turning a panic into a *PanicError.
func callStep(ctx context.Context, def *stepDef, step *Step) (err error) {
	if def == nil {
		// start_step checks the step is defined, in the database's definition;
		// this worker's may differ during a deploy.
		return fmt.Errorf("geneva: step %s is not defined in this worker's %s", step.Name, step.WorkflowType)
	}
	defer recoverInto(&err)
	return def.fn(ctx, step)
}

func callCondition(ctx context.Context, cond Condition, step *Step) (result bool, err error) {
	defer recoverInto(&err)
	return cond(ctx, step)
}

func callHandler(ctx context.Context, handler Handler, step *Step, stepErr error) (decision error) {
	defer recoverInto(&decision)
	return handler(ctx, step, stepErr)
}

func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = &PanicError{Value: r, Stack: debug.Stack()}
	}
}

func deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}
