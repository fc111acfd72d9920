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
	"github.com/geneva-dev/geneva/internal/protocol"
)

// finalizeAttempts is how many times the outcome's transaction is tried before
// the execution is left in_progress for housekeeping to recover, when trying
// longer is not called for (see recordWithRetries).
const finalizeAttempts = 5

// recorded is what SQL recorded for an ending: the outcome (nil when the
// execution had moved on), the workflow's state after it, whether to report
// the error, and the next step SQL started for this job (see
// ending.continueInline), if any.
type recorded struct {
	outcome       *goclient.Outcome
	workflowState goclient.WorkflowState
	report        bool
	next          *protocol.Execution
}

// finalize is the one place an execution's end is reported: it records the
// ending (recordWithRetries, with one SQL call that completes the River job
// in the same transaction), logs it, and hands the error to the
// ErrorReporter when SQL says so. It returns the next step SQL started for
// this job, if any. It tries again while the database fails; when it gives
// up the execution stays in_progress until housekeeping recovers it.
func (e *executor) finalize(ctx context.Context, db DB, end *ending) (*protocol.Execution, error) {
	// The step's context may be canceled (a timeout, a shutdown): record the
	// outcome anyway. stop ends only when the worker stops hard.
	stop := ctx
	ctx = context.WithoutCancel(ctx)

	step := end.step
	var (
		result    *recorded
		recordErr error
	)
	e.event(ctx, EventFinalize, step, func(ctx context.Context) error {
		result, recordErr = e.recordWithRetries(ctx, stop, db, end)
		if recordErr == nil {
			step.Outcome, step.WorkflowState = deref(result.outcome), result.workflowState
		}
		return recordErr
	})
	if recordErr != nil {
		return nil, fmt.Errorf("geneva: recording the outcome of execution %d: %w", step.ExecutionID, recordErr)
	}

	logAttrs := []any{slog.String("outcome", string(step.Outcome))}
	switch {
	case result.outcome == nil && result.next != nil:
		// an earlier try committed but its reply was lost; SQL hands over
		// the step that try started
		step.Logger.InfoContext(ctx, "geneva: step ended (recorded by an earlier try)")
	case result.outcome == nil:
		step.Logger.WarnContext(ctx, "geneva: outcome not recorded: the execution had moved on", logAttrs...)
	case end.failure == nil:
		step.Logger.InfoContext(ctx, "geneva: step ended", logAttrs...)
	default:
		step.Logger.Log(ctx, failureLevel(step.Outcome, result.report), "geneva: step failed",
			append(logAttrs, slog.String("error", errorMessage(end.err)), slog.Bool("reported", result.report))...)
	}
	if result.report && e.errorReporter != nil {
		func() {
			defer func() {
				if r := recover(); r != nil {
					step.Logger.ErrorContext(ctx, "geneva: the error reporter panicked", slog.Any("panic", r))
				}
			}()
			e.errorReporter(ctx, step, end.err)
		}()
	}
	return result.next, nil
}

// failureLevel is the level a step's error is logged at, per what its
// exception policy decided: the error level when the error is reported or
// the outcome is terminal (the workflow paused or canceled by the exception,
// reattempts exhausted, the step no longer defined); else (reattempted or
// skipped, and not reported) the warning level.
func failureLevel(outcome goclient.Outcome, reported bool) slog.Level {
	switch {
	case reported:
		return slog.LevelError
	case outcome == goclient.OutcomeReattemptedByException || outcome == goclient.OutcomeSkippedByException:
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
//
// It needs only the ending (and the executor, for a handler's decision): a
// Worker's normal endings go through its completer (see record), and a try
// that fails there is tried again here, through the completer again.
func (e *executor) recordWithRetries(ctx, stop context.Context, db DB, end *ending) (*recorded, error) {
	var stopHeartbeat func()
	defer func() {
		if stopHeartbeat != nil {
			stopHeartbeat()
		}
	}()
	for attempt := 1; ; attempt++ {
		tryCtx, cancel := context.WithTimeout(ctx, recordTryTimeout)
		result, err := e.record(tryCtx, db, end)
		cancel()
		if err == nil || errors.Is(err, goclient.ErrInvalidArgument) {
			return result, err
		}
		persist := e.recordUntilStopped && databaseUnavailable(err)
		if attempt >= finalizeAttempts && (!persist || stop.Err() != nil) {
			return nil, err
		}
		if persist && stopHeartbeat == nil && end.phase != phasePrecondition {
			// the step's own heartbeat has stopped; housekeeping must not
			// take it for dead while its outcome waits
			heartbeatCtx, cancelHeartbeat := context.WithCancel(stop)
			stopBeating := e.startHeartbeat(heartbeatCtx, protocol.New(db), end.step)
			stopHeartbeat = func() { cancelHeartbeat(); stopBeating() }
		}
		wait := recordBackoff(attempt)
		end.step.Logger.WarnContext(ctx, "geneva: recording the outcome failed; trying again",
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

// record makes the one SQL call that records an ending (and completes the
// River job): geneva.complete_steps with its element (a signal, a running
// step's error or a give-back; through the completer, with the others that
// end close to it, or as a batch of one), or geneva.fail_step with a
// precondition's error. A transactional step's signal is recorded on its
// own transaction instead (recordOnTx), alone.
// A handler policy takes a second call: the first records nothing and asks
// for the handler's decision, which the ending keeps; the handler runs
// outside any batch.
func (e *executor) record(ctx context.Context, db DB, end *ending) (*recorded, error) {
	if end.tx != nil {
		// a transactional step's signal, with its writes (once: else end
		// is now what to record in a fresh transaction)
		if result, settled := e.recordOnTx(ctx, end); settled {
			return result, nil
		}
	}
	if end.failure != nil && end.phase == phasePrecondition {
		return e.recordFailure(ctx, protocol.New(db), end)
	}
	result, err := e.completer.call(ctx, db, end.report())
	if (end.replyCursor != nil || end.replyWait != nil || end.children != nil) && errors.Is(err, goclient.ErrInvalidArgument) {
		// the HTTP reply's wait or cursor was refused (no wait, nested too
		// deep), or the step's children (an unknown type, an empty hero):
		// the step fails with it, without them
		var failure error = &HTTPError{Class: "http.bad_reply", Message: err.Error()}
		if end.step.http == nil {
			failure = &ChildrenError{Err: err}
		}
		end.step.replyCursor, end.step.replyWait = nil, nil
		end.step.dropChildren()
		*end = *newEnding(end.wf, end.step, end.jobID, phaseStep, failure)
		result, err = e.completer.call(ctx, db, end.report())
	}
	if err == nil && end.failure != nil && end.decision == nil && deref(result.Action) == "handler" {
		end.decision = e.decide(ctx, end.wf, end.step, deref(result.Handler), end.err)
		result, err = e.completer.call(ctx, db, end.report())
	}
	if err != nil {
		return nil, err
	}
	return &recorded{outcome: result.Outcome, workflowState: result.WorkflowState, report: result.Report, next: result.Next}, nil
}

// recordFailure records a precondition's error (geneva.fail_step): SQL
// resolves the policy; when it names a handler, the handler decides (once:
// the ending keeps its decision) and SQL is told the decision.
func (e *executor) recordFailure(ctx context.Context, client *protocol.Client, end *ending) (*recorded, error) {
	result, err := client.FailStep(ctx, end.step.ExecutionID, end.failStep())
	if err != nil {
		return nil, err
	}
	if deref(result.Action) == "handler" {
		end.decision = e.decide(ctx, end.wf, end.step, deref(result.Handler), end.err)
		if result, err = client.FailStep(ctx, end.step.ExecutionID, end.failStep()); err != nil {
			return nil, err
		}
	}
	return &recorded{outcome: result.Outcome, workflowState: result.WorkflowState, report: result.Report}, nil
}

// decide runs an imperative handler and returns its decision; a handler that
// decides nothing (or something else than reattempt, skip, cancel, pause or
// finished), fails or panics pauses the workflow.
func (e *executor) decide(ctx context.Context, wf *registeredWorkflow, step *Step, name string, stepErr error) *decision {
	handler := wf.handlers[name]
	if handler == nil {
		step.Logger.ErrorContext(ctx, "geneva: the policy's handler is not in this worker's definition; pausing", slog.String("handler", name))
		return &decision{signal: SignalPause}
	}
	decided := callHandler(ctx, handler, step, stepErr)
	flow, ok := asFlowControl(decided)
	if !ok || !slices.Contains([]Signal{
		SignalReattempt, SignalSkip, SignalCancel, SignalPause, SignalFinished,
	}, flow.Signal) {
		if decided != nil {
			step.Logger.WarnContext(ctx, "geneva: the exception handler decided nothing usable; pausing", slog.String("decision", errorMessage(decided)))
		}
		return &decision{signal: SignalPause}
	}
	return &decision{signal: flow.Signal, wait: flowWait(flow)}
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
