package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ResumableFunc is a resumable step's code: it works through a long
// collection, saving where it got to in the Iteration's cursor, and returns
// the error Set, Advance, Checkpoint or SkipTo returned when one tells it to
// stop: a successor execution of the step then continues from the cursor.
// It returns nil when the whole collection is done, or a flow-control value
// or an error as any step does.
type ResumableFunc func(ctx context.Context, it *Iteration) error

// ResumableOpts are options for Workflow.ResumableStep: every StepOpts field,
// and the budgets of one execution.
type ResumableOpts struct {
	// Wait is how long the step waits after its predecessor ends (not between
	// its own executions).
	//
	// Defaults to no wait.
	Wait time.Duration

	// AfterStart is the step's offset from the workflow's start (see
	// StepOpts.AfterStart): its first execution is due no earlier than the
	// workflow's creation plus it (not its successors).
	//
	// Defaults to none.
	AfterStart time.Duration

	// Skip always skips the step (decided in SQL, as `"skip_if": true`).
	Skip bool

	// SkipIf skips the step when it returns true (checked before each of its
	// executions).
	SkipIf Condition

	// OnException is the step's single exception policy. A reattempt keeps
	// the cursor; an error that pauses the workflow keeps it for
	// resume_workflow.
	OnException *ExceptionPolicy

	// OnExceptionList is the step's composable policies. Not with OnException.
	OnExceptionList []ExceptionPolicy

	// Before places the step before the named step. Not with After.
	Before string

	// After places the step after the named step. Not with Before.
	After string

	// Await makes the step's first execution wait for an event sent to its
	// workflow (see StepOpts.Await); its successors carry the event it
	// consumed (Step.Event), and do not wait again.
	//
	// Defaults to nil: the step awaits nothing.
	Await *Await

	// Limits names the named limits each of the step's executions is held
	// to (see StepOpts.Limits).
	//
	// Defaults to none.
	Limits []string

	// MaxIterations hands over to a successor execution after this many
	// iterations (calls of Set or Advance) in one execution.
	//
	// Defaults to no limit.
	MaxIterations int

	// MaxRuntime hands over to a successor execution once one execution has
	// run this long (measured with Config.Clock), so that no execution holds a
	// worker for hours and deploys never wait long for one.
	//
	// Defaults to no limit.
	MaxRuntime time.Duration

	// CheckpointInterval is how often the cursor is written to the database
	// while the step runs: Set, Advance and Checkpoint write it (one small
	// statement, which also learns of an operator's pause or cancel) at their
	// first call in an execution, then only when this long has passed since
	// the last write, so that a tight loop does not become a round trip per
	// item. Before the step has a cursor the write saves none and only
	// asks, so a step that only calls Checkpoint learns of a pause or cancel
	// too. The cursor is always written when the
	// step hands over (a budget is spent, the worker stops, SkipTo) and when
	// it ends, before its result (nil, an error, a flow-control value) is
	// recorded. An operator's pause or cancel is learnt at the next write.
	// After a crash the step repeats at most the items of the last interval.
	// -1 writes at every call.
	//
	// Defaults to 1 second.
	CheckpointInterval time.Duration

	// Transactional cannot be set: a resumable step's cursor must commit
	// while it runs, and a transactional step's writes commit only with its
	// end (StepOpts.Transactional). Validate (worker.New) refuses it, as a
	// configuration error.
	Transactional bool
}

// stepOpts is the StepOpts part of o.
func (o *ResumableOpts) stepOpts() *StepOpts {
	return &StepOpts{
		Wait:            o.Wait,
		AfterStart:      o.AfterStart,
		Skip:            o.Skip,
		SkipIf:          o.SkipIf,
		OnException:     o.OnException,
		OnExceptionList: o.OnExceptionList,
		Before:          o.Before,
		After:           o.After,
		Await:           o.Await,
		Limits:          o.Limits,
	}
}

// defaultCheckpointInterval is ResumableOpts.CheckpointInterval's default.
const defaultCheckpointInterval = time.Second

// ResumableStep adds a resumable step: one that works through a collection
// too long for one execution, keeping a cursor, and hands over to successor
// executions of itself (each its own row, continues_from_id naming the one
// before) when a budget is spent, the worker shuts down, or an operator
// pauses or cancels the workflow. The cursor survives every way the step runs
// again (a hand-over, a reattempt, housekeeping's recovery, a worker's hard
// stop, an error that pauses the workflow and its resume); only
// ReattemptRewind and an operator's schedule_step or skip_step start it from
// nothing.
//
//	newsletter := worker.NewWorkflow("Newsletter", nil).
//		ResumableStep("send", func(ctx context.Context, it *worker.Iteration) error {
//			return worker.IterateQuery(ctx, it, pool,
//				"select id, email from subscribers", nil, nil,
//				func(ctx context.Context, s Subscriber) error { return send(ctx, s) })
//		}, &worker.ResumableOpts{MaxRuntime: 5 * time.Minute})
//
// An empty name makes an anonymous step, as Step does; Before and After place
// it as they place a plain step.
func (w *Workflow) ResumableStep(name string, fn ResumableFunc, opts *ResumableOpts) *Workflow {
	if opts == nil {
		opts = &ResumableOpts{}
	}
	copied := *opts
	var stepFn StepFunc
	if fn != nil {
		stepFn = func(ctx context.Context, step *Step) error {
			return fn(ctx, newIteration(step, &copied))
		}
	}
	w.Step(name, stepFn, copied.stepOpts())
	label := name
	if label == "" {
		label = fmt.Sprintf("step_%d", w.stepCount)
	}
	switch {
	case copied.MaxIterations < 0:
		w.errorf("step %s: negative MaxIterations %d", label, copied.MaxIterations)
	case copied.MaxRuntime < 0:
		w.errorf("step %s: negative MaxRuntime %s", label, copied.MaxRuntime)
	case copied.Transactional:
		w.errorf("step %s: a resumable step cannot be transactional (its cursor must commit while it runs; a transactional step's writes commit only with its end)", label)
	case copied.CheckpointInterval < -1:
		w.errorf("step %s: negative CheckpointInterval %s (-1 writes at every call)", label, copied.CheckpointInterval)
	}
	return w
}

// StopReason says why a resumable step was told to hand over.
type StopReason string

const (
	// StopMaxIterations: ResumableOpts.MaxIterations is spent.
	StopMaxIterations StopReason = "max_iterations"
	// StopMaxRuntime: ResumableOpts.MaxRuntime is spent.
	StopMaxRuntime StopReason = "max_runtime"
	// StopShutdown: the worker is stopping (or the step's context ended).
	StopShutdown StopReason = "shutdown"
	// StopRequested: an operator asked the workflow to pause or cancel, an
	// event of its type's CancelOn came, or the execution was ended
	// meanwhile (housekeeping recovered it).
	StopRequested StopReason = "requested"
	// StopSkipTo: the step called SkipTo.
	StopSkipTo StopReason = "skip_to"
)

// StopError is what Set, Advance, Checkpoint and SkipTo return when the step
// must stop now: the step returns it (as it is or wrapped), its cursor is
// saved, and the worker hands over to a successor execution of the step
// (geneva.complete_step with the suspend signal; an operator's pause keeps
// the successor for resume_workflow, a cancel cancels it). It unwraps to a
// *FlowControl with the suspend signal.
type StopError struct {
	// Reason is why the step stops.
	Reason StopReason
	// Wait is how long the successor waits (SkipTo's wait).
	Wait time.Duration
}

func (e *StopError) Error() string {
	msg := "geneva: resumable step stops and hands over to a successor (" + string(e.Reason) + ")"
	if e.Wait > 0 {
		msg += " after " + e.Wait.String()
	}
	return msg
}

// Unwrap returns the suspend flow control the worker records.
func (e *StopError) Unwrap() error {
	return &FlowControl{Signal: SignalSuspend, Wait: e.Wait}
}

// ReattemptRewind runs a resumable step again after wait (now when zero), from
// the start: its successor has no cursor. (Reattempt, and every other way a
// step runs again, keeps the cursor.)
func ReattemptRewind(wait time.Duration) error {
	return &FlowControl{Signal: SignalReattemptRewind, Wait: wait}
}

// Iteration is what a resumable step works with: the step (embedded) and its
// cursor, the value that says where the work got to. The cursor is any value
// that marshals to JSON (an integer, a string, an opaque page token, a time,
// a struct); by convention it is the position the next iteration starts from
// (the last id done, the next page's token).
//
//	it.Cursor(&lastID) // false on the first run: start at the beginning
//	for _, row := range rowsAfter(lastID) {
//		process(row)
//		if err := it.Set(ctx, row.ID); err != nil {
//			return err // hand over: a successor continues after row.ID
//		}
//	}
//	return nil
//
// An Iteration belongs to one execution and one goroutine.
type Iteration struct {
	*Step

	opts     ResumableOpts
	interval time.Duration
	now      func() time.Time
	stopping func() bool

	cursor     json.RawMessage // the current cursor; nil when none
	dirty      bool            // cursor changed since it was last written
	resumed    bool
	advanced   bool
	iterations int
	start      time.Time
	lastWrite  time.Time // real time, for CheckpointInterval; zero before the first write
	stopped    *StopError
}

func newIteration(step *Step, opts *ResumableOpts) *Iteration {
	it := &Iteration{
		Step:     step,
		opts:     *opts,
		interval: opts.CheckpointInterval,
		now:      time.Now,
		stopping: func() bool { return false },
	}
	if it.interval == 0 {
		it.interval = defaultCheckpointInterval
	}
	it.cursor = cursorOrNil(step.Cursor)
	// (a successor continues only a predecessor that saved a cursor; a
	// cursor of JSON null, written by hand, reads as none)
	it.resumed = step.ContinuesFromID != 0 && it.cursor != nil
	if step.exec != nil {
		if step.exec.clock != nil {
			it.now = step.exec.clock
		}
		it.stopping = step.exec.stopping.Load
	}
	it.start = it.now()
	step.iteration = it
	return it
}

// Cursor decodes the cursor into v (a pointer) and returns true; it returns
// false, leaving v alone, when there is no cursor yet (the first run, or a
// rewind).
func (it *Iteration) Cursor(v any) (bool, error) {
	if it.cursor == nil {
		return false, nil
	}
	if err := json.Unmarshal(it.cursor, v); err != nil {
		return true, fmt.Errorf("geneva: decoding the cursor %s: %w", it.cursor, err)
	}
	return true, nil
}

// RawCursor returns the cursor's JSON; nil when there is none.
func (it *Iteration) RawCursor() json.RawMessage { return it.cursor }

// Resumed tells whether this execution continues an earlier one of the step
// (it has a cursor handed over by its predecessor).
func (it *Iteration) Resumed() bool { return it.resumed }

// Advanced tells whether the cursor changed during this execution.
func (it *Iteration) Advanced() bool { return it.advanced }

// Set makes v the cursor (one iteration done), then checks as Checkpoint
// does. A non-nil error is either a *StopError, which the step must return
// now (the cursor is saved: the successor continues from v), or a failure to
// marshal v or to write it.
func (it *Iteration) Set(ctx context.Context, v any) error {
	if err := it.setCursor(v); err != nil {
		return err
	}
	it.iterations++
	return it.check(ctx)
}

// setCursor makes v the cursor, to be written at the next write.
func (it *Iteration) setCursor(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("geneva: encoding the cursor: %w", err)
	}
	if bytes.Equal(raw, []byte("null")) {
		return errors.New("geneva: the cursor cannot be null (to start over, return worker.ReattemptRewind)")
	}
	it.cursor = raw
	it.dirty = true
	it.advanced = true
	return nil
}

// Advance adds one to an integer cursor (no cursor counts as 0), then checks
// as Set does. It refuses a cursor that is not an integer.
func (it *Iteration) Advance(ctx context.Context) error {
	var n int64
	if it.cursor != nil {
		parsed, err := strconv.ParseInt(string(bytes.TrimSpace(it.cursor)), 10, 64)
		if err != nil {
			return fmt.Errorf("geneva: Advance needs an integer cursor, not %s (use Set)", it.cursor)
		}
		n = parsed
	}
	return it.Set(ctx, n+1)
}

// Checkpoint checks whether the step must stop: a budget is spent, the worker
// is stopping, or an operator asked to pause or cancel the workflow, which it
// asks the database at the first call in an execution and then whenever
// CheckpointInterval has passed (writing the cursor, if any). It returns a
// *StopError then, which the step must return; the cursor is saved first.
func (it *Iteration) Checkpoint(ctx context.Context) error {
	return it.check(ctx)
}

// SkipTo makes v the cursor, saves it and returns the *StopError the step
// returns to hand over to a successor due after wait (now when zero): to wait
// out a rate limit, or to jump ahead without a loop's `continue`.
//
//	if resp.RateLimited {
//		return it.SkipTo(ctx, page, resp.RetryAfter)
//	}
func (it *Iteration) SkipTo(ctx context.Context, v any, wait time.Duration) error {
	if err := it.setCursor(v); err != nil {
		return err
	}
	return it.stop(ctx, &StopError{Reason: StopSkipTo, Wait: max(wait, 0)})
}

// check is Set's, Advance's and Checkpoint's check: the budgets and the
// worker's stop in memory, an operator's request with the write.
func (it *Iteration) check(ctx context.Context) error {
	if it.stopped != nil {
		return it.stop(ctx, it.stopped)
	}
	switch {
	case it.stopping() || ctx.Err() != nil:
		return it.stop(ctx, &StopError{Reason: StopShutdown})
	case it.opts.MaxIterations > 0 && it.iterations >= it.opts.MaxIterations:
		return it.stop(ctx, &StopError{Reason: StopMaxIterations})
	case it.opts.MaxRuntime > 0 && it.now().Sub(it.start) >= it.opts.MaxRuntime:
		return it.stop(ctx, &StopError{Reason: StopMaxRuntime})
	}
	if it.interval > 0 && !it.lastWrite.IsZero() && time.Since(it.lastWrite) < it.interval {
		return nil
	}
	stop, err := it.write(ctx)
	if err != nil {
		return err
	}
	if stop {
		it.stopped = &StopError{Reason: StopRequested}
		return it.stopped
	}
	return nil
}

// stop saves the cursor and returns why the step stops.
func (it *Iteration) stop(ctx context.Context, reason *StopError) error {
	first := it.stopped == nil
	it.stopped = reason
	if err := it.flush(ctx); err != nil {
		return err
	}
	if first && it.Logger != nil {
		it.Logger.InfoContext(ctx, "geneva: resumable step hands over",
			"reason", string(reason.Reason), "cursor", string(it.cursor), "iterations", it.iterations)
	}
	return reason
}

// flush writes the cursor when it changed since the last write, even when ctx
// has ended (a hard stop hands over from the cursor too).
func (it *Iteration) flush(ctx context.Context) error {
	if !it.dirty {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, err := it.write(ctx)
	return err
}

// write saves the cursor (geneva.checkpoint_step) and says whether to stop
// (an operator's request). Without a cursor it saves none and only asks.
func (it *Iteration) write(ctx context.Context) (bool, error) {
	it.lastWrite = time.Now()
	if it.client == nil {
		return false, errors.New("geneva: checkpoint outside a running step")
	}
	stop, err := it.client.CheckpointStep(ctx, it.ExecutionID, it.cursor)
	if err != nil {
		return false, fmt.Errorf("geneva: saving the cursor: %w", err)
	}
	it.dirty = false
	return stop, nil
}

// saved records that Step.Checkpoint wrote cursor: the Iteration goes on from
// it, and writes no older one over it.
func (it *Iteration) saved(cursor json.RawMessage) {
	it.cursor = cursorOrNil(cursor)
	it.advanced = it.advanced || it.cursor != nil
	it.dirty = false
	it.lastWrite = time.Now()
}

// cursorOrNil is a saved cursor, nil for none (SQL NULL or JSON null).
func cursorOrNil(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return raw
}
