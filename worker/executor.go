package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
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

// execution is the execution the job names, as the executor takes it before
// the claim: its identity alone.
func (args StepArgs) execution() *protocol.Execution {
	return &protocol.Execution{
		ExecutionID: args.ExecutionID, WorkflowID: args.WorkflowID, WorkflowType: args.WorkflowType,
		HeroType: args.HeroType, HeroID: args.HeroID, StepName: args.StepName,
	}
}

// DB is goclient.DB, what the worker runs SQL on: a *pgxpool.Pool, or a
// *pgx.Conn (the test helpers use one with geneva.fake_now set).
type DB = goclient.DB

// executor runs step executions: the preconditions, geneva.start_steps, the
// step function, and the one SQL call that records what happened. It decides
// nothing about the workflow's state: SQL does.
type executor struct {
	registry registry
	hooks    []Hook
	logger   *slog.Logger
	// errorReporter is Config.ErrorReporter (nil for none).
	errorReporter func(ctx context.Context, step *Step, err error)
	stepTimeout   time.Duration
	// heartbeat is how often a running step's execution is touched
	// (geneva.heartbeat_step); zero for none (the runner's single connection
	// cannot be shared with a heartbeat).
	heartbeat time.Duration
	// inlineSteps is how many next steps one job may run (zero for the
	// runner, whose Perform runs one execution).
	inlineSteps int
	// stopping ends inline runs at the next step boundary, so that a worker's
	// graceful stop does not wait for whole workflows.
	stopping atomic.Bool
	// clock measures resumable steps' MaxRuntime (Config.Clock).
	clock func() time.Time
	// recordUntilStopped keeps trying to record an outcome while the
	// database does not answer, until the worker stops hard (a Worker's; a
	// Runner gives up after finalizeAttempts).
	recordUntilStopped bool
	// completer records normal ends, in batches while a Worker with a
	// batch size above 1 runs; else each alone, as a batch of one.
	completer *completer
	// running counts the step executions being performed, for the
	// completer: a batch holding all of them closes at once.
	running atomic.Int64
	// claimer claims executions, batched as the completer's ends.
	claimer *claimer
	// claiming counts the step executions being performed that have not
	// been claimed yet, for the claimer.
	claiming atomic.Int64
	// http runs HTTP steps (Config.HTTP); nil when this worker runs none.
	http *httpRunner
}

// newExecutor makes the executor of a worker or a runner from its config.
func newExecutor(config *Config) (*executor, error) {
	if config == nil {
		config = &Config{}
	}
	if config.StepTimeout < 0 {
		return nil, fmt.Errorf("geneva: negative StepTimeout %s", config.StepTimeout)
	}
	reg, err := newRegistry(config.Workflows)
	if err != nil {
		return nil, fmt.Errorf("geneva: %w", err)
	}
	logger := config.Logger
	if logger == nil {
		logger = slog.Default()
	}
	e := &executor{
		registry: reg,
		hooks:    config.Hooks,
		logger:   logger,
		// (without a reporter, the "step failed" line at the error level is
		// the report: see finalize)
		errorReporter: config.ErrorReporter,
		stepTimeout:   config.StepTimeout,
		clock:         config.Clock,
	}
	for _, wf := range reg {
		wf.hooks = typeHooks(config.Hooks, wf.Workflow)
	}
	if config.HTTP != nil {
		if e.http, err = newHTTPRunner(config.HTTP, reg.httpQueues(config.HTTP)); err != nil {
			return nil, err
		}
	}
	e.batch(nil, 1) // a Runner's: each call a batch of one, on its DB
	return e, nil
}

// batch makes the executor's claimer and completer, which batch the calls
// of the steps that come close together on db, at most size a batch (a
// Worker's, once started: see batchedCalls.start).
func (e *executor) batch(db DB, size int) {
	// a step still being claimed cannot report its end yet: a batch of
	// ends holding every other running step closes at once
	e.completer = newCompleter(db, e.logger, size, func() int {
		return int(e.running.Load() - e.claiming.Load())
	})
	e.claimer = newClaimer(db, e.logger, size, func() int { return int(e.claiming.Load()) })
}

func deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}

// stepWorker is the River worker of kind "geneva_step".
type stepWorker struct {
	river.WorkerDefaults[StepArgs]
	worker *Worker
}

// notHereSnooze is how long a job whose step this worker does not define
// waits for a worker that does.
const notHereSnooze = 10 * time.Second

// Work runs the step execution the job names. SQL completes the job in the
// transaction that records the step's outcome; when there is nothing to run,
// River completes it.
func (s *stepWorker) Work(ctx context.Context, job *river.Job[StepArgs]) error {
	err := s.worker.exec.perform(ctx, s.worker.pool, job.Args.execution(), job.ID, job.Queue)
	var notHere *NotHereError
	switch {
	case errors.As(err, &notHere):
		s.worker.exec.logger.WarnContext(ctx, err.Error()+"; leaving the job for a newer worker",
			slog.Int64("execution_id", job.Args.ExecutionID), slog.Int64("job_id", job.ID))
		return river.JobSnooze(notHereSnooze)
	case err != nil && ctx.Err() != nil:
		// cut off by a shutdown before anything was recorded: available again
		// at once, without counting an attempt
		return river.JobSnooze(0)
	}
	return err
}

// Timeout is -1: River never cuts a step off (StepTimeout applies inside the
// executor, and fails the step through its policies).
func (s *stepWorker) Timeout(*river.Job[StepArgs]) time.Duration { return -1 }

// perform runs one step execution on db: the one args names (its identity:
// the execution, its workflow and step; SQL's claim gives the rest). jobID,
// when not zero, is the River job being worked, from queue: SQL completes it
// in the transaction that records the outcome. An error means nothing was
// recorded and the job should be retried.
//
// A step passes three stages, a file each: claim (claim.go: which workflow
// and step, the preconditions, SQL's claim), run (run.go: the step's code,
// its hooks, its heartbeat) and record (record.go: its ending recorded, in
// the completer's batches, batch.go); then each next step SQL starts for
// this job runs and is recorded the same way.
func (e *executor) perform(ctx context.Context, db DB, args *protocol.Execution, jobID int64, queue string) error {
	e.running.Add(1)
	defer e.running.Add(-1)
	wf, step, err := e.claim(ctx, db, args, jobID, queue)
	if err != nil || step == nil {
		return err
	}
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
		next, err := e.run(ctx, db, wf, step, jobID, offer)
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
