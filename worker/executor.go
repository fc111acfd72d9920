package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
)

// StepArgs are the arguments of the River job that triggers a step execution.
// PL/pgSQL inserts these jobs (kind "geneva_step") when it schedules a step;
// besides the execution's id they carry the facts conditions need, so that
// they run without a read.
type StepArgs struct {
	ExecutionID  int64  `json:"execution_id"`
	WorkflowID   int64  `json:"workflow_id"`
	WorkflowType string `json:"workflow_type"`
	HeroType     string `json:"hero_type"`
	HeroID       string `json:"hero_id"`
	StepName     string `json:"step_name"`
}

// Kind is the River job kind of step executions.
func (StepArgs) Kind() string { return "geneva_step" }

// DB is what the executor runs SQL on: a *pgxpool.Pool, or a *pgx.Conn (the
// test helpers use one with geneva.fake_now set).
type DB interface {
	goclient.DB
	Begin(ctx context.Context) (pgx.Tx, error)
}

// executor runs step executions: the preconditions, geneva.start_step, the
// step function, and the one SQL call that records what happened. It decides
// nothing about the workflow's state: SQL does.
type executor struct {
	registry    registry
	hooks       []Hook
	logger      *slog.Logger
	report      func(ctx context.Context, step *Step, err error)
	stepTimeout time.Duration
	// stopping is set when a shutdown cuts running steps off: a step whose
	// context was canceled then is given back (geneva.interrupt_step), not
	// failed.
	stopping atomic.Bool
}

// phase is what a finalize records the end of.
type phase int

const (
	phaseStep         phase = iota // the step function ran
	phasePrecondition              // a condition failed before the step started
	phaseInterrupted               // a shutdown cut the step off
)

// newExecutor makes the executor of a worker or a runner from its config.
func newExecutor(config *Config) (*executor, error) {
	if config == nil {
		config = &Config{}
	}
	reg, err := newRegistry(config.Workflows)
	if err != nil {
		return nil, fmt.Errorf("geneva: %w", err)
	}
	logger := config.Logger
	if logger == nil {
		logger = slog.Default()
	}
	report := config.ErrorReporter
	if report == nil {
		report = func(ctx context.Context, step *Step, err error) {
			step.Logger.ErrorContext(ctx, "geneva: step error", slog.String("error", err.Error()))
		}
	}
	return &executor{
		registry:    reg,
		hooks:       config.Hooks,
		logger:      logger,
		report:      report,
		stepTimeout: config.StepTimeout,
	}, nil
}

// finalizeAttempts is how many times the outcome's transaction is tried before
// the execution is left in_progress for housekeeping to recover.
const finalizeAttempts = 4

// perform runs one step execution on db. jobID, when not zero, is the River
// job being worked: SQL completes it in the transaction that records the
// outcome. An error means nothing was recorded and the job should be retried.
func (e *executor) perform(ctx context.Context, db DB, args StepArgs, jobID int64) error {
	wf := e.registry[args.WorkflowType]
	if wf == nil {
		return fmt.Errorf("geneva: this worker does not run workflow type %q (it runs %v)", args.WorkflowType, e.registry.types())
	}

	client := goclient.New(db)
	step := &Step{
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
	}

	var (
		started      *goclient.StartedStep
		precondition goclient.Precondition
		conditionErr error
	)
	err := runHooks(ctx, e.hooks, EventPreconditions, step, func(ctx context.Context) error {
		precondition, conditionErr = e.preconditions(ctx, wf, step)
		step.Precondition = string(precondition)
		if conditionErr != nil {
			return nil // recorded by finalize, through the exception policies
		}
		var err error
		started, err = client.StartStep(ctx, step.ExecutionID, precondition)
		return err
	})
	if errors.Is(err, goclient.ErrNotFound) {
		// deleted with its workflow (housekeeping's retention) before its job ran
		step.Logger.WarnContext(ctx, "geneva: the execution no longer exists")
		return nil
	}
	if err != nil {
		return fmt.Errorf("geneva: starting execution %d: %w", step.ExecutionID, err)
	}
	if conditionErr != nil {
		return e.finalize(ctx, db, wf, step, conditionErr, phasePrecondition, jobID)
	}
	if started == nil {
		if precondition != goclient.PreconditionNone {
			step.Logger.InfoContext(ctx, "geneva: step not run", slog.String("precondition", string(precondition)))
		} else {
			step.Logger.DebugContext(ctx, "geneva: nothing to run (duplicate, early or late job, or paused workflow)")
		}
		return nil
	}

	step.Attempt = started.Attempt
	step.ScheduledFor = started.ScheduledFor
	step.StartedAt = started.StartedAt
	step.Cursor = started.Cursor
	step.Logger = step.Logger.With(slog.Int("attempt", started.Attempt))

	stepCtx := ctx
	if e.stepTimeout > 0 {
		var cancel context.CancelFunc
		stepCtx, cancel = context.WithTimeout(ctx, e.stepTimeout)
		defer cancel()
	}
	stepErr := runHooks(stepCtx, e.hooks, EventStep, step, func(ctx context.Context) error {
		return callStep(ctx, wf.step(step.Name), step)
	})
	phase := phaseStep
	if stepErr != nil && ctx.Err() != nil && e.stopping.Load() {
		phase = phaseInterrupted
	}
	return e.finalize(ctx, db, wf, step, stepErr, phase, jobID)
}

// preconditions runs the hero check, the workflow's cancel_if conditions and
// the step's skip_if, in that order, and says which held.
func (e *executor) preconditions(ctx context.Context, wf *registeredWorkflow, step *Step) (goclient.Precondition, error) {
	if wf.opts.HeroMissing != nil {
		missing, err := callCondition(ctx, wf.opts.HeroMissing, step)
		if err != nil || missing {
			return goclient.PreconditionHeroMissing, err
		}
	}
	for _, cond := range wf.cancelIf {
		cancel, err := callCondition(ctx, cond.fn, step)
		if err != nil {
			return goclient.PreconditionNone, fmt.Errorf("cancel_if %s: %w", cond.name, err)
		}
		if cancel {
			return goclient.PreconditionCancel, nil
		}
	}
	// (an undefined step is left to start_step, which records it)
	if def := wf.step(step.Name); def != nil && def.opts.SkipIf != nil {
		skip, err := callCondition(ctx, def.opts.SkipIf, step)
		if err != nil {
			return goclient.PreconditionNone, fmt.Errorf("skip_if: %w", err)
		}
		if skip {
			return goclient.PreconditionSkip, nil
		}
	}
	return goclient.PreconditionNone, nil
}

// finalize records what happened with one SQL call, which completes the River
// job in the same transaction, then reports the error when SQL says so.
func (e *executor) finalize(ctx context.Context, db DB, wf *registeredWorkflow, step *Step, stepErr error, phase phase, jobID int64) error {
	// The step's context may be canceled (a timeout, a shutdown): record the
	// outcome anyway.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()

	var (
		outcome       *string
		workflowState string
		report        bool
	)
	err := runHooks(ctx, e.hooks, EventFinalize, step, func(ctx context.Context) error {
		var err error
		for attempt := 1; ; attempt++ {
			outcome, workflowState, report, err = e.record(ctx, goclient.New(db), wf, step, stepErr, phase, jobID)
			if err == nil {
				step.Outcome, step.WorkflowState = deref(outcome), workflowState
				return nil
			}
			if attempt == finalizeAttempts || ctx.Err() != nil {
				return err
			}
			step.Logger.WarnContext(ctx, "geneva: recording the outcome failed; trying again", slog.String("error", err.Error()))
			time.Sleep(time.Duration(attempt*attempt) * 100 * time.Millisecond)
		}
	})
	if err != nil {
		return fmt.Errorf("geneva: recording the outcome of execution %d: %w", step.ExecutionID, err)
	}

	logAttrs := []any{slog.String("outcome", step.Outcome)}
	switch {
	case outcome == nil:
		step.Logger.WarnContext(ctx, "geneva: outcome not recorded: the execution had moved on", logAttrs...)
	case stepErr == nil || phase == phaseInterrupted:
		step.Logger.InfoContext(ctx, "geneva: step ended", logAttrs...)
	default:
		if _, ok := asFlowControl(stepErr); ok {
			step.Logger.InfoContext(ctx, "geneva: step ended", logAttrs...)
		} else {
			step.Logger.WarnContext(ctx, "geneva: step failed", append(logAttrs, slog.String("error", stepErr.Error()))...)
		}
	}
	if report && e.report != nil {
		e.report(ctx, step, stepErr)
	}
	return nil
}

// record makes the one SQL call that records the step's end (and completes
// the River job), and returns the outcome, the workflow's state after it, and
// whether to report the error. A handler policy takes a second call: the
// first records nothing and asks for the handler's decision.
func (e *executor) record(ctx context.Context, client *goclient.Client, wf *registeredWorkflow, step *Step, stepErr error, phase phase, jobID int64) (*string, string, bool, error) {
	opts := &goclient.ReportOpts{JobID: jobID}
	var (
		result *goclient.StepResult
		err    error
	)
	flow, isFlow := asFlowControl(stepErr)
	switch {
	case phase == phasePrecondition:
		return e.recordFailure(ctx, client, wf, step, stepErr, true, jobID)
	case phase == phaseInterrupted:
		result, err = client.InterruptStep(ctx, step.ExecutionID, opts)
	case stepErr == nil:
		result, err = client.CompleteStep(ctx, step.ExecutionID, goclient.SignalSuccess, 0, opts)
	case isFlow:
		result, err = client.CompleteStep(ctx, step.ExecutionID, flow.Signal, flow.Wait, opts)
	default:
		return e.recordFailure(ctx, client, wf, step, stepErr, false, jobID)
	}
	if err != nil {
		return nil, "", false, err
	}
	return result.Outcome, result.WorkflowState, false, nil
}

// recordFailure records a step's error: SQL resolves the policy; when it
// names a handler, the handler decides and SQL is told its decision.
func (e *executor) recordFailure(ctx context.Context, client *goclient.Client, wf *registeredWorkflow, step *Step, stepErr error, precondition bool, jobID int64) (*string, string, bool, error) {
	failure := &goclient.Failure{
		Classes:      errorClasses(wf, stepErr),
		Message:      stepErr.Error(),
		Backtrace:    backtrace(stepErr),
		Precondition: precondition,
		JobID:        jobID,
	}
	result, err := client.FailStep(ctx, step.ExecutionID, failure)
	if err != nil {
		return nil, "", false, err
	}
	if deref(result.Action) == "handler" {
		failure.HandlerSignal, failure.HandlerWait = e.decide(ctx, wf, step, deref(result.Handler), stepErr)
		if result, err = client.FailStep(ctx, step.ExecutionID, failure); err != nil {
			return nil, "", false, err
		}
	}
	return result.Outcome, result.WorkflowState, result.Report, nil
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
			step.Logger.WarnContext(ctx, "geneva: the exception handler decided nothing usable; pausing", slog.String("decision", decision.Error()))
		}
		return goclient.SignalPause, 0
	}
	return flow.Signal, flow.Wait
}

// errorClasses are the names SQL matches exception policies against: the
// type names in err's chain, outermost first, then the names of the
// workflow's matchers that match err.
func errorClasses(wf *registeredWorkflow, err error) []string {
	classes := errorTypeNames(err)
	for _, matcher := range wf.matchers {
		name := matcher.MatcherName()
		if !slices.Contains(classes, name) && matcher.MatchError(err) {
			classes = append(classes, name)
		}
	}
	return classes
}

// backtrace is a panic's stack, or the detailed form of errors that print
// one with %+v.
func backtrace(err error) string {
	var panicErr *PanicError
	if errors.As(err, &panicErr) {
		return string(panicErr.Stack)
	}
	if detailed := fmt.Sprintf("%+v", err); detailed != err.Error() {
		return detailed
	}
	return ""
}

// callStep runs a step function, turning a panic into a *PanicError.
func callStep(ctx context.Context, def *stepDef, step *Step) (err error) {
	if def == nil {
		// start_step checks the step is defined, in the database's definition;
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

func deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}
