package worker

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/internal/protocol"
)

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
