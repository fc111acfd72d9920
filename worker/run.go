package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/geneva-dev/geneva/internal/protocol"
)

// run runs a started execution's step and records how it ended. When
// offer is true and SQL starts the next step for this job, it returns it.
func (e *executor) run(ctx context.Context, db DB, wf *registeredWorkflow, step *Step, jobID int64, offer bool) (*protocol.Execution, error) {
	stepCtx := ctx
	if e.stepTimeout > 0 {
		var cancel context.CancelFunc
		stepCtx, cancel = context.WithTimeout(ctx, e.stepTimeout)
		defer cancel()
	}
	if transactional(wf, step) {
		tx, err := beginStepTx(ctx, db)
		if err != nil {
			// it cannot run as defined: give it back, to run again
			step.Logger.WarnContext(ctx, "geneva: beginning the step's transaction failed; giving the step back", slog.String("error", err.Error()))
			return e.finalize(ctx, db, newEnding(wf, step, jobID, phaseInterrupted, err))
		}
		step.tx = tx
	}
	stopHeartbeat := e.startHeartbeat(ctx, step.client, step)
	ran := false
	stepErr := runHooks(stepCtx, e.hooksOf(step), EventStep, step, func(ctx context.Context) error {
		ran = true
		switch {
		case step.inputErr != nil:
			// what it would run with cannot be read: its failure, as any
			// error of the step's (the exception policies apply)
			return step.inputErr
		case step.httpErr != nil:
			return step.httpErr
		case step.http != nil && e.http != nil:
			return e.http.call(ctx, step)
		}
		return callStep(ctx, wf.step(step.Name), step)
	})
	stopHeartbeat()
	tx := step.tx
	step.tx = nil // (valid for the step's run only)
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

	// The job's context is canceled only when the worker stops hard (River's
	// StopAndCancel) or the job is canceled: give the step back rather than
	// fail it. A step timeout cancels only the step's context.
	ended := phaseStep
	if stepErr != nil && errors.Is(ctx.Err(), context.Canceled) {
		ended = phaseInterrupted
	}
	end := newEnding(wf, step, jobID, ended, stepErr)
	end.continueInline = offer && ctx.Err() == nil && !e.stopping.Load()
	if tx != nil {
		if end.phase == phaseStep && end.failure == nil {
			end.tx = tx // its writes commit with its end
		} else {
			rollbackStepTx(ctx, tx, step.Logger)
		}
	}
	return e.finalize(ctx, db, end)
}

// followedBy is the started Step of next, the execution SQL started for this
// job when it recorded step's end (geneva.complete_steps): the next step of
// step's workflow, or a waiter of another workflow of the same type that
// took the slot of its type's concurrency step freed (SQL hands over no
// other). next carries its workflow's facts; the queue is step's.
func (step *Step) followedBy(next *protocol.Execution) *Step {
	s := step.exec.newStep(step.client, next)
	s.start(next)
	s.Queue = step.Queue
	return s
}

// event runs f inside the hooks, and runs it anyway (logging the mistake)
// when a hook did not call next: the executor must not lose a step's
// progress to a hook.
func (e *executor) event(ctx context.Context, event HookEvent, step *Step, f func(context.Context) error) {
	ran := false
	err := runHooks(ctx, e.hooksOf(step), event, step, func(ctx context.Context) error {
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

// callStep runs a step function, turning a panic into a *PanicError.
func callStep(ctx context.Context, def *stepDef, step *Step) (err error) {
	if def == nil {
		// start_steps checks the step is defined, in the database's definition;
		// this worker's may differ during a deploy.
		return fmt.Errorf("geneva: step %s is not defined in this worker's %s", step.Name, step.WorkflowType)
	}
	defer recoverInto(&err)
	return def.fn(ctx, step)
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
