package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/geneva-dev/geneva/goclient"
)

// phase is what a finalize records the end of.
type phase int

const (
	phaseStep         phase = iota // the step function ran
	phasePrecondition              // a condition failed before the step started
	phaseInterrupted               // a shutdown cut the step off
)

// finalizeAttempts is how many times the outcome's transaction is tried before
// the execution is left in_progress for housekeeping to recover, when trying
// longer is not called for (see recordWithRetries).
const finalizeAttempts = 5

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
	next  *goclient.NextStep

	failure *goclient.Failure
}

// recorded is what SQL recorded: the outcome (nil when the execution had moved
// on), the workflow's state after it, and whether to report the error.
type recorded struct {
	outcome       *string
	workflowState string
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
		result, recordErr = e.recordWithRetries(ctx, stop, goclient.New(db), rec)
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
func (e *executor) recordWithRetries(ctx, stop context.Context, client *goclient.Client, rec *recording) (*recorded, error) {
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
func (e *executor) record(ctx context.Context, client *goclient.Client, rec *recording) (*recorded, error) {
	opts := &goclient.ReportOpts{JobID: rec.jobID, Continue: rec.offer}
	var (
		result *goclient.StepResult
		err    error
	)
	flow, isFlow := asFlowControl(rec.err)
	switch {
	case rec.phase == phasePrecondition:
		return e.recordFailure(ctx, client, rec, true)
	case rec.phase == phaseInterrupted:
		result, err = client.InterruptStep(ctx, rec.step.ExecutionID, opts)
	case rec.err == nil:
		result, err = client.CompleteStep(ctx, rec.step.ExecutionID, goclient.SignalSuccess, 0, opts)
	case isFlow:
		result, err = client.CompleteStep(ctx, rec.step.ExecutionID, flow.Signal, flowWait(flow), opts)
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
func (e *executor) recordFailure(ctx context.Context, client *goclient.Client, rec *recording, precondition bool) (*recorded, error) {
	if rec.failure == nil {
		rec.failure = &goclient.Failure{
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
func (e *executor) decide(ctx context.Context, wf *registeredWorkflow, step *Step, name string, stepErr error) (goclient.Signal, time.Duration) {
	handler := wf.handlers[name]
	if handler == nil {
		step.Logger.ErrorContext(ctx, "geneva: the policy's handler is not in this worker's definition; pausing", slog.String("handler", name))
		return goclient.SignalPause, 0
	}
	decision := callHandler(ctx, handler, step, stepErr)
	flow, ok := asFlowControl(decision)
	if !ok || !slices.Contains([]goclient.Signal{
		goclient.SignalReattempt, goclient.SignalSkip, goclient.SignalCancel, goclient.SignalPause, goclient.SignalFinished,
	}, flow.Signal) {
		if decision != nil {
			step.Logger.WarnContext(ctx, "geneva: the exception handler decided nothing usable; pausing", slog.String("decision", errorMessage(decision)))
		}
		return goclient.SignalPause, 0
	}
	return flow.Signal, flowWait(flow)
}

// flowWait is the wait SQL takes with a signal: only reattempt (rewinding or
// not) and suspend wait, never less than nothing.
func flowWait(flow *FlowControl) time.Duration {
	if flow.Wait < 0 || (flow.Signal != goclient.SignalReattempt && flow.Signal != goclient.SignalSuspend &&
		flow.Signal != goclient.SignalReattemptRewind) {
		return 0
	}
	return min(flow.Wait, LongestWait)
}

const (
	// recordTryTimeout bounds one try at recording an outcome, so that a
	// connection that hangs (a network partition) does not hold it forever.
	recordTryTimeout = time.Minute

	// recordFirstWait and recordMaxWait bound the waits between tries at
	// recording an outcome: the first wait, doubling up to the cap.
	recordFirstWait = 100 * time.Millisecond
	recordMaxWait   = 5 * time.Second
)

// recordBackoff is the wait after the attempt-th failed try at recording an
// outcome: recordFirstWait doubling with each try up to recordMaxWait, give
// or take a quarter, so that the workers of a fleet do not all come back at
// once when the database does.
func recordBackoff(attempt int) time.Duration {
	wait := recordMaxWait
	if attempt < 16 {
		wait = min(recordFirstWait<<(attempt-1), recordMaxWait)
	}
	return wait*3/4 + rand.N(wait/2)
}

// databaseUnavailable says whether err means the database did not answer the
// question, so that the same call may well succeed later: no connection (or
// a lost one), a timeout, a server starting up or shutting down, out of
// connections or other resources, a transaction rolled back by a
// serialization failure or deadlock. An answer (a refusal, a bug) is none of
// these.
func databaseUnavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return true // a network error, a timeout, a pool that cannot connect
	}
	switch pgErr.Code[:2] {
	case "08", // connection exception
		"40", // transaction rollback: serialization failure, deadlock
		"53", // insufficient resources: too many connections, disk full
		"57", // operator intervention: shutdown, crash, cannot connect now, statement timeout
		"58": // system error (I/O)
		return true
	}
	return false
}
