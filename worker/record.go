package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// The record stage of a step: its ending recorded (finalize: the completer's
// batches of complete_steps, a failure's exception handler asked first,
// retries while the database does not answer, a give-back).

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

// completer records the ends of the running steps of a worker that end
// close together (their signals, their errors, their give-backs) with one
// call to geneva.complete_steps: one statement, one transaction and one
// commit for the batch. A failure whose policy names a handler is not
// recorded by its first batch, which asks for the decision: the handler
// runs outside any batch (it must not hold one up), and its decision goes in
// a later one. A precondition's error (of an execution not started) is
// geneva.fail_step's, alone.
type completer = batchedCalls[protocol.CompleteReport, *protocol.StepResult]

func newCompleter(db DB, logger *slog.Logger, size int, running func() int) *completer {
	return &completer{
		db: db, logger: logger, size: size, window: completeWindow, running: running,
		what: "step ends",
		many: func(ctx context.Context, db DB, reports []protocol.CompleteReport) ([]*protocol.StepResult, error) {
			results, err := protocol.New(db).CompleteSteps(ctx, reports)
			giveBack(ctx, db, logger, err)
			return results, err
		},
	}
}

// giveBack gives back the executions a call started and could not hand over
// (a *protocol.UnhandedError: its result was cut short after the statement
// ran): no step of this worker will run them, and its callers see only the
// error. Each is interrupted (geneva.interrupt_step: scheduled again now,
// with a job of its own) rather than left in_progress until housekeeping
// takes it for stuck. What the call started and did not return (the rows
// after the cut) cannot be named: housekeeping recovers those.
func giveBack(ctx context.Context, db DB, logger *slog.Logger, err error) {
	var unhanded *protocol.UnhandedError
	if !errors.As(err, &unhanded) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, id := range unhanded.Started {
		tryCtx, cancel := context.WithTimeout(ctx, recordTryTimeout)
		_, giveErr := protocol.New(db).InterruptStep(tryCtx, id, nil)
		cancel()
		if giveErr != nil {
			logger.WarnContext(ctx, "geneva: giving back an execution started and not handed over failed; housekeeping will recover it",
				slog.Int64("execution_id", id), slog.String("error", giveErr.Error()))
		}
	}
}

// ending is how one execution ended, classified once (newEnding) and
// reported from in one place (finalize): which SQL call records it, with what
// signal, wait or error description. It carries all that reporting needs, so
// that whatever records it (one call per execution today) takes only the
// value.
type ending struct {
	// wf and step are the workflow and the execution that ended.
	wf   *registeredWorkflow
	step *Step
	// jobID is the River job SQL completes with the outcome; zero for none (a
	// chained step's, which ran in its predecessor's job).
	jobID int64
	// continueInline asks SQL to start the next step for this job
	// (geneva.complete_steps' p_continue); only with a signal.
	continueInline bool

	// phase is what ended: the step, its preconditions, or a shutdown's cut.
	phase phase
	// signal is how the step ended without an error (geneva.complete_step):
	// success when it returned nil, else its flow control's signal. Empty for
	// an error (see failure) and for an interruption.
	signal Signal
	// wait is the signal's wait (see flowWait).
	wait time.Duration
	// err is what the step or condition returned, nil on success: what the
	// log and the ErrorReporter see.
	err error
	// failure describes err for geneva.fail_step (classes, chain, message,
	// backtrace); nil unless the step or a condition failed.
	failure *protocol.Failure
	// decision is the exception handler's decision once it is taken, so that
	// a report tried again (after a lost connection, say) passes it on rather
	// than run the handler again; nil until then.
	decision *decision
	// replyCursor and replyWait are an HTTP step's reply's (Step's),
	// recorded in the same call as the end; nil for none.
	replyCursor, replyWait json.RawMessage
	// tx is a transactional step's transaction, holding its writes, which
	// the ending is recorded on (recordOnTx); nil for none, and once tried.
	tx pgx.Tx
	// children are the children the step started (Step.StartChildren, an
	// HTTP reply's), as JSON, created with its success; nil for none.
	children json.RawMessage
}

// decision is what an exception handler decided (see executor.decide).
type decision struct {
	signal Signal
	wait   time.Duration
}

// phase is what an ending is the end of.
type phase int

const (
	phaseStep         phase = iota // the step function ran
	phasePrecondition              // a condition failed before the step started
	phaseInterrupted               // a shutdown cut the step off (or the worker gave it back)
)

// newEnding classifies how an execution ended, from what ended (phase) and
// what it returned (err): an interruption is given back whatever err is; a
// step that returned nil or flow control with a signal a step may give ends
// with that signal; anything else (a condition's error, a step's error, flow
// control with a signal a step cannot give) is a failure, which goes through
// the exception policies. jobID is the River job to complete with it.
func newEnding(wf *registeredWorkflow, step *Step, jobID int64, ph phase, err error) *ending {
	end := &ending{wf: wf, step: step, jobID: jobID, phase: ph, err: err}
	if ph == phaseInterrupted {
		return end
	}
	if ph == phaseStep {
		end.replyCursor, end.replyWait = step.replyCursor, step.replyWait
		end.children = step.startedChildren()
	}
	if ph == phaseStep {
		if err == nil {
			end.signal = SignalSuccess
			return end
		}
		if flow, ok := asFlowControl(err); ok {
			if slices.Contains(protocol.Signals, protocol.Signal(flow.Signal)) { // what complete_step takes
				end.signal, end.wait = flow.Signal, flowWait(flow)
				return end
			}
			end.err = fmt.Errorf("geneva: a step returned flow control with an unknown signal %q", flow.Signal)
		}
	}
	end.failure = &protocol.Failure{
		Classes:      errorClasses(wf, end.err),
		Chain:        errorChain(end.err),
		Message:      errorMessage(end.err),
		Backtrace:    backtrace(end.err),
		Precondition: ph == phasePrecondition,
		JobID:        jobID,
	}
	httpFailure(end.failure, end.err)
	return end
}

// failStep is the failure to pass to geneva.fail_step: the error's
// description, with the handler's decision once taken.
func (end *ending) failStep() *protocol.Failure {
	failure := *end.failure
	if end.decision != nil {
		failure.HandlerSignal, failure.HandlerWait = protocol.Signal(end.decision.signal), end.decision.wait
	}
	return &failure
}

// report is the ending as an element of geneva.complete_steps (what the
// completer records): a give-back, a running step's error (with the
// handler's decision once taken), or a signal; not a precondition's error
// (geneva.fail_step's alone: the execution has not started).
func (end *ending) report() protocol.CompleteReport {
	report := protocol.CompleteReport{ExecutionID: end.step.ExecutionID, JobID: end.jobID, ReplyCursor: end.replyCursor}
	switch {
	case end.phase == phaseInterrupted:
		report.Interrupt = true
	case end.failure != nil:
		report.Failure = end.failStep()
	default:
		report.Signal, report.Wait, report.Continue = protocol.Signal(end.signal), end.wait, end.continueInline
		report.ReplyWait, report.Children = end.replyWait, end.children
	}
	return report
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
