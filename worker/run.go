package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// perform runs one step execution on db: the one args names (its identity:
// the execution, its workflow and step; SQL's claim gives the rest). jobID,
// when not zero, is the River job being worked, from queue: SQL completes it
// in the transaction that records the outcome. An error means nothing was
// recorded and the job should be retried.
func (e *executor) perform(ctx context.Context, db DB, args *protocol.Execution, jobID int64, queue string) error {
	e.running.Add(1)
	defer e.running.Add(-1)
	e.claiming.Add(1)
	claiming := true
	claimed := func() {
		if claiming {
			claiming = false
			e.claiming.Add(-1)
		}
	}
	defer claimed()
	client := protocol.New(db)
	wf := e.registry[args.WorkflowType]
	if (wf == nil || wf.step(args.StepName) == nil) && e.http.runs(args.WorkflowType, queue) {
		// a job in an HTTP queue: an HTTP step of a type defined in the
		// database (the claim hands over its endpoint)
		if wf == nil {
			wf = &registeredWorkflow{Workflow: &Workflow{workflowType: args.WorkflowType}}
		}
	} else if wf == nil || wf.step(args.StepName) == nil {
		defined, err := client.StepDefined(ctx, args.WorkflowType, args.StepName)
		if err != nil {
			return fmt.Errorf("geneva: looking up step %s of %s: %w", args.StepName, args.WorkflowType, err)
		}
		if defined {
			return &NotHereError{WorkflowType: args.WorkflowType, StepName: args.StepName}
		}
		// Defined nowhere: start_steps records it (failed/step_not_defined).
		if wf == nil {
			wf = &registeredWorkflow{Workflow: &Workflow{workflowType: args.WorkflowType}}
		}
	}

	step := e.newStep(client, args)

	// The hooks see each event's result; what the executor acts on is what
	// the event's own function captured, whatever a hook returns.
	var (
		started      *protocol.Execution
		conditionErr error
		startErr     error
	)
	e.event(ctx, EventPreconditions, step, func(ctx context.Context) error {
		var precondition protocol.Precondition
		precondition, conditionErr = e.preconditions(ctx, wf, step)
		if conditionErr != nil {
			return conditionErr
		}
		step.Precondition = precondition
		started, startErr = e.claimer.call(ctx, db, protocol.Claim{ExecutionID: step.ExecutionID, Precondition: precondition})
		if started != nil {
			step.start(started) // here, so that the hooks see that it started
		}
		return startErr
	})
	claimed() // (or, after an error, never will)
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
		_, err := e.finalize(ctx, db, newEnding(wf, step, jobID, phasePrecondition, conditionErr))
		return err
	}
	if started == nil {
		if step.Precondition != "" {
			step.Logger.InfoContext(ctx, "geneva: step not run", slog.String("precondition", string(step.Precondition)))
		} else {
			step.Logger.DebugContext(ctx, "geneva: nothing to run (duplicate, early or late job, or paused workflow)")
		}
		return nil
	}

	if step.http == nil && step.httpErr == nil && step.inputErr == nil && wf.step(step.Name) == nil && e.http != nil {
		// a Go step in a queue of HTTP steps (a type whose queue is one of
		// them), which this worker does not define: give it back
		step.Logger.WarnContext(ctx, "geneva: a step without http in a queue of HTTP steps; giving it back")
		_, err := e.finalize(ctx, db, newEnding(wf, step, jobID, phaseInterrupted, &NotHereError{WorkflowType: step.WorkflowType, StepName: step.Name}))
		return err
	}

	// Run the step, then each next step SQL starts for this job (see
	// Config.InlineSteps).
	for inline := 0; ; inline++ {
		step.Logger = step.Logger.With(slog.Int("attempt", step.Attempt))
		if err := ctx.Err(); err != nil {
			// the worker stopped hard while this step was claimed (a batch
			// of claims finishes what it took in) or while the last one was
			// recorded: give it back rather than start it on a dead context
			_, err = e.finalize(ctx, db, newEnding(wf, step, jobID, phaseInterrupted, err))
			return err
		}
		offer := inline < e.inlineSteps && wf.opts.HeroMissing == nil && wf.opts.LoadHero == nil
		next, err := e.runStarted(ctx, db, wf, step, jobID, offer)
		if err != nil || next == nil {
			return err
		}

		jobID = 0 // completed with the first step; the next ones have none
		step = step.followedBy(next)
		// SQL started it: nothing to check, but hooks see every step's events
		e.event(ctx, EventPreconditions, step, func(context.Context) error { return nil })
		if wf.step(step.Name) == nil && step.http == nil && step.inputErr == nil {
			// defined in the database only (a deploy in progress): give it back
			step.Logger.WarnContext(ctx, "geneva: the next step is not defined in this worker; giving it back", slog.Int("attempt", step.Attempt))
			_, err := e.finalize(ctx, db, newEnding(wf, step, jobID, phaseInterrupted, &NotHereError{WorkflowType: step.WorkflowType, StepName: step.Name}))
			return err
		}
	}
}

// runStarted runs a started execution's step and records how it ended. When
// offer is true and SQL starts the next step for this job, it returns it.
func (e *executor) runStarted(ctx context.Context, db DB, wf *registeredWorkflow, step *Step, jobID int64, offer bool) (*protocol.Execution, error) {
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

// newStep is the Step of an execution, before it starts (see Step.start):
// args' identity (execution, workflow, hero, step name).
func (e *executor) newStep(client *protocol.Client, args *protocol.Execution) *Step {
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

// start sets what SQL started step's execution with: its attempt, times,
// queue and trace context, a resumable step's hand-over and the event it
// consumed.
func (step *Step) start(started *protocol.Execution) {
	step.Attempt = started.Attempt
	step.ScheduledFor = started.ScheduledFor
	step.StartedAt = started.StartedAt
	step.Queue = started.Queue
	step.TraceContext = deref(started.TraceContext)
	step.Group = deref(started.Group)
	step.Cursor = started.Cursor
	step.ContinuesFromID = deref(started.ContinuesFromID)
	step.event = eventOf(started)
	step.http, step.httpErr = parseHTTPSpec(started.HTTP)
	if started.Undecodable != nil {
		step.inputErr = &UndecodableInputError{Input: started.Undecodable.Input, Err: started.Undecodable.Err}
	}
	step.IdempotencyKey = cmp.Or(deref(started.IdempotencyKey), started.ExecutionID)
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

// preconditions runs the hero loader and check (heroCheck), the workflow's
// cancel_if conditions and the step's skip_if, in that order, and says which
// held. A condition may return Cancel() or Skip() instead of a result; those
// decide as a cancel_if or a skip_if that holds. A missing hero is reported
// (PreconditionHeroMissing) for SQL to apply the type's policy: at once when
// the type may not proceed without it (no condition runs on a missing hero),
// else after the conditions, when none held.
func (e *executor) preconditions(ctx context.Context, wf *registeredWorkflow, step *Step) (protocol.Precondition, error) {
	missing, decided, err := heroCheck(ctx, wf, step)
	switch {
	case err != nil || decided != protocol.PreconditionNone:
		return decided, err
	case missing && !wf.opts.MayProceedWithoutHero:
		return protocol.PreconditionHeroMissing, nil
	}
	for _, cond := range wf.cancelIf {
		found, err := evalCondition(ctx, "cancel_if "+cond.name, cond.fn, protocol.PreconditionCancel, step)
		if err != nil || found != protocol.PreconditionNone {
			return found, err
		}
	}
	// (an undefined step is left to start_steps, which records it)
	if def := wf.step(step.Name); def != nil && def.opts.SkipIf != nil {
		found, err := evalCondition(ctx, "skip_if", def.opts.SkipIf, protocol.PreconditionSkip, step)
		if err != nil || found != protocol.PreconditionNone {
			return found, err
		}
	}
	if missing {
		return protocol.PreconditionHeroMissing, nil
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
