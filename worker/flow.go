package worker

import (
	"errors"
	"time"

	"github.com/geneva-dev/geneva/internal/protocol"
)

// FlowControl is a step's decision about its workflow, returned as an error
// value from a step function (or an exception handler):
//
//	if result.RateLimited {
//		return worker.Reattempt(result.RetryAfter)
//	}
//
// The worker reports it to SQL as a signal, which decides what happens. A
// FlowControl wrapped in another error still counts.
type FlowControl struct {
	// Signal is what is asked for.
	Signal Signal
	// Wait is the wait of Reattempt and Suspend.
	Wait time.Duration
}

func (f *FlowControl) Error() string {
	if f.Wait > 0 {
		return "geneva: flow control: " + string(f.Signal) + " after " + f.Wait.String()
	}
	return "geneva: flow control: " + string(f.Signal)
}

// Cancel cancels the workflow: the step ends canceled/canceled_by_flow_control
// and nothing more runs.
func Cancel() error { return &FlowControl{Signal: SignalCancel} }

// Finished ends the workflow early, as finished: the step ends
// completed/success and the remaining steps do not run.
func Finished() error { return &FlowControl{Signal: SignalFinished} }

// Pause pauses the workflow for a person to look at: the step ends
// canceled/paused_by_flow_control, and resuming the workflow runs the step
// again.
func Pause() error { return &FlowControl{Signal: SignalPause} }

// Reattempt runs the step again after wait (now when zero or negative, after
// LongestWait when longer): the step ends completed/reattempted. Reattempts
// asked for by a step never count against an exception policy's
// max_reattempts. A resumable step's next execution keeps its cursor (see
// ReattemptRewind).
func Reattempt(wait time.Duration) error {
	return &FlowControl{Signal: SignalReattempt, Wait: wait}
}

// Skip skips the rest of the step: it ends skipped/skipped_by_flow_control and
// the next step runs.
func Skip() error { return &FlowControl{Signal: SignalSkip} }

// Suspend hands a resumable step over to a successor execution of the same
// step after wait (at most LongestWait), which gets the cursor last saved
// with Step.Checkpoint.
func Suspend(wait time.Duration) error {
	return &FlowControl{Signal: SignalSuspend, Wait: wait}
}

// Signal is what a FlowControl asks for: the signal the worker reports to
// SQL (geneva.complete_step's p_signal; a handler's decision is fail_step's
// p_handler_signal). It is the worker protocol's type, whose values a test
// pins to the signals SQL accepts.
type Signal = protocol.Signal

// Precondition is what a worker's preconditions found before it started a
// step (Step.Precondition): the worker protocol's type, whose values a test
// pins to the preconditions SQL accepts.
type Precondition = protocol.Precondition

// The preconditions, besides none ("").
const (
	PreconditionCancel      = protocol.PreconditionCancel      // a cancel_if held
	PreconditionSkip        = protocol.PreconditionSkip        // the step's skip_if held
	PreconditionHeroMissing = protocol.PreconditionHeroMissing // the hero is gone
)

// The signals, as the functions above return them.
const (
	SignalCancel    = protocol.SignalCancel    // Cancel
	SignalFinished  = protocol.SignalFinished  // Finished
	SignalPause     = protocol.SignalPause     // Pause
	SignalReattempt = protocol.SignalReattempt // Reattempt
	// SignalReattemptRewind is ReattemptRewind: a resumable step runs again
	// from the start.
	SignalReattemptRewind = protocol.SignalReattemptRewind
	SignalSkip            = protocol.SignalSkip // Skip
	// SignalSuccess is what returning nil reports: the step is done.
	SignalSuccess = protocol.SignalSuccess
	SignalSuspend = protocol.SignalSuspend // Suspend
)

// asFlowControl finds a FlowControl in err's chain.
func asFlowControl(err error) (*FlowControl, bool) {
	var flow *FlowControl
	ok := errors.As(err, &flow)
	return flow, ok
}
