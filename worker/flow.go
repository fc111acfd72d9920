package worker

import (
	"errors"
	"time"

	"github.com/geneva-dev/geneva/goclient"
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
	Signal goclient.Signal
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
func Cancel() error { return &FlowControl{Signal: goclient.SignalCancel} }

// Finished ends the workflow early, as finished: the step ends
// completed/success and the remaining steps do not run.
func Finished() error { return &FlowControl{Signal: goclient.SignalFinished} }

// Pause pauses the workflow for a person to look at: the step ends
// canceled/paused_by_flow_control, and resuming the workflow runs the step
// again.
func Pause() error { return &FlowControl{Signal: goclient.SignalPause} }

// Reattempt runs the step again after wait (now when zero or negative, after
// LongestWait when longer): the step ends completed/reattempted. Reattempts
// asked for by a step never count against an exception policy's
// max_reattempts. A resumable step's next execution keeps its cursor (see
// ReattemptRewind).
func Reattempt(wait time.Duration) error {
	return &FlowControl{Signal: goclient.SignalReattempt, Wait: wait}
}

// Skip skips the rest of the step: it ends skipped/skipped_by_flow_control and
// the next step runs.
func Skip() error { return &FlowControl{Signal: goclient.SignalSkip} }

// Suspend hands a resumable step over to a successor execution of the same
// step after wait (at most LongestWait), which gets the cursor last saved
// with Step.Checkpoint.
func Suspend(wait time.Duration) error {
	return &FlowControl{Signal: goclient.SignalSuspend, Wait: wait}
}

// asFlowControl finds a FlowControl in err's chain.
func asFlowControl(err error) (*FlowControl, bool) {
	var flow *FlowControl
	ok := errors.As(err, &flow)
	return flow, ok
}
