package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// The claim stage of a step: which workflow and step a job names (resolve),
// the step's preconditions and SQL's claim (start_steps, batched by the
// claimer).

// claim resolves the workflow type and step args name (resolve), checks the
// step's preconditions and claims it in SQL (start_steps, in the claimer's
// batches), with the hooks of EventPreconditions. It returns the step to
// run; a nil step when there is none (not started, or its end already
// recorded: a precondition's error, a step this worker cannot run), and an
// error when nothing was recorded and the job should be retried.
func (e *executor) claim(ctx context.Context, db DB, args *protocol.Execution, jobID int64, queue string) (*registeredWorkflow, *Step, error) {
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
	wf, err := e.resolve(ctx, client, args, queue)
	if err != nil {
		return nil, nil, err
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
		return nil, nil, fmt.Errorf("geneva: preconditions of execution %d: %w", step.ExecutionID, ctx.Err())
	}
	if errors.Is(startErr, goclient.ErrNotFound) {
		// deleted with its workflow (housekeeping's retention) before its job ran
		step.Logger.WarnContext(ctx, "geneva: the execution no longer exists")
		return nil, nil, nil
	}
	if startErr != nil {
		return nil, nil, fmt.Errorf("geneva: starting execution %d: %w", step.ExecutionID, startErr)
	}
	if conditionErr != nil {
		_, err := e.finalize(ctx, db, newEnding(wf, step, jobID, phasePrecondition, conditionErr))
		return nil, nil, err
	}
	if started == nil {
		if step.Precondition != "" {
			step.Logger.InfoContext(ctx, "geneva: step not run", slog.String("precondition", string(step.Precondition)))
		} else {
			step.Logger.DebugContext(ctx, "geneva: nothing to run (duplicate, early or late job, or paused workflow)")
		}
		return nil, nil, nil
	}

	if step.http == nil && step.httpErr == nil && step.inputErr == nil && wf.step(step.Name) == nil && e.http != nil {
		// a Go step in a queue of HTTP steps (a type whose queue is one of
		// them), which this worker does not define: give it back
		step.Logger.WarnContext(ctx, "geneva: a step without http in a queue of HTTP steps; giving it back")
		_, err := e.finalize(ctx, db, newEnding(wf, step, jobID, phaseInterrupted, &NotHereError{WorkflowType: step.WorkflowType, StepName: step.Name}))
		return nil, nil, err
	}
	return wf, step, nil
}

// resolve finds the workflow type args names among the registered ones. A
// step this worker does not define is an HTTP step when its queue is one of
// this worker's HTTP queues (the claim hands over its endpoint), a
// NotHereError when the database defines it (another worker's), and
// otherwise a step defined nowhere, which start_steps records
// (failed/step_not_defined).
func (e *executor) resolve(ctx context.Context, client *protocol.Client, args *protocol.Execution, queue string) (*registeredWorkflow, error) {
	wf := e.registry[args.WorkflowType]
	if wf != nil && wf.step(args.StepName) != nil {
		return wf, nil
	}
	if !e.http.runs(args.WorkflowType, queue) {
		defined, err := client.StepDefined(ctx, args.WorkflowType, args.StepName)
		if err != nil {
			return nil, fmt.Errorf("geneva: looking up step %s of %s: %w", args.StepName, args.WorkflowType, err)
		}
		if defined {
			return nil, &NotHereError{WorkflowType: args.WorkflowType, StepName: args.StepName}
		}
	}
	if wf == nil {
		wf = &registeredWorkflow{Workflow: &Workflow{workflowType: args.WorkflowType}}
	}
	return wf, nil
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

func callCondition(ctx context.Context, cond Condition, step *Step) (result bool, err error) {
	defer recoverInto(&err)
	return cond(ctx, step)
}

// claimer claims the executions of the River jobs a worker is handed close
// together with one call to geneva.start_steps, as the completer records
// their ends.
type claimer = batchedCalls[protocol.Claim, *protocol.Execution]

func newClaimer(db DB, logger *slog.Logger, size int, running func() int) *claimer {
	return &claimer{
		db: db, logger: logger, size: size, window: completeWindow, running: running,
		settle: claimSettle, what: "step claims",
		many: func(ctx context.Context, db DB, claims []protocol.Claim) ([]*protocol.Execution, error) {
			started, err := protocol.New(db).StartSteps(ctx, claims)
			giveBack(ctx, db, logger, err)
			return started, err
		},
	}
}
