package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// Config configures a Worker.
type Config struct {
	// Workflows are the workflow types the worker runs. Their definitions are
	// registered in the database when the worker starts.
	Workflows []*Workflow

	// MaxWorkers is how many steps run at once in each queue the workflows
	// use.
	//
	// Defaults to 10.
	MaxWorkers int

	// Logger receives the worker's logs; each step's Logger derives from it.
	//
	// Defaults to slog.Default().
	Logger *slog.Logger

	// Hooks wrap the events of each step's run, the first outermost, around
	// the hooks of the step's workflow type (WorkflowOpts.Hooks).
	Hooks []Hook

	// ErrorReporter receives the errors of failed steps that their exception
	// policy says to report (see ExceptionPolicy.Report).
	//
	// Defaults to none: the log's "step failed" line, at the error level for
	// a reported error, is the report. Whatever the reporter, a failed step is
	// logged at the error level when its error is reported or its outcome is
	// terminal (paused or canceled by the exception, reattempts exhausted),
	// else (reattempted or skipped by the policy) at the warning level.
	ErrorReporter func(ctx context.Context, step *Step, err error)

	// StepTimeout cancels a step's context after this long; the step then
	// fails with its context's error, through the exception policies.
	//
	// Defaults to no timeout.
	StepTimeout time.Duration

	// InlineSteps is how many further steps one River job may run: when a step
	// ends and the next one is due at once with no condition to evaluate
	// first, SQL starts it in the transaction that records the step's end
	// (geneva.complete_steps, continuing) and the worker runs it in the same
	// job, without a River job of its own: one transaction per step instead
	// of two, and no queueing between steps. When the step ends holding a
	// slot of its type's concurrency that a waiter of another workflow is
	// given (someone waits for the key), the worker runs that waiter next
	// in the same way, when no condition of its has to run first. Each step
	// still gets its own execution row, hooks and outcome. Workflows with a
	// hero loader (LoadHero) or a HeroMissing check never run inline; a graceful stop ends inline runs
	// at the next step.
	// -1 turns it off.
	//
	// Defaults to 20.
	InlineSteps int

	// HeartbeatInterval is how often a running step's execution is touched
	// (geneva.heartbeat_step), so that housekeeping, which recovers in_progress
	// executions silent for the housekeeping settings' stuck-in-progress
	// threshold (geneva.get_housekeeping_settings), does not take a long step
	// for one whose worker died. Keep it well below that threshold; -1 turns
	// heartbeats off.
	//
	// Defaults to 1 minute.
	HeartbeatInterval time.Duration

	// Clock is the clock resumable steps measure ResumableOpts.MaxRuntime
	// with. Tests give a fake one to spend a budget without sleeping
	// (workertest's harness uses its engine clock).
	//
	// Defaults to time.Now.
	Clock func() time.Time

	// CompleteBatchSize is the most ends of running steps (a step that
	// returned nil, flow control or an error, or was given back) the worker
	// records in one transaction: steps that end close together (within
	// about a millisecond, or at once when no other step is running) are
	// recorded with one call to geneva.complete_steps and one commit, with
	// the same outcomes as one call each. An error whose policy names a
	// handler is recorded once the handler, run outside any batch, has
	// decided; a precondition's error is recorded alone. A
	// batch the database refuses (one element's job was not its execution's,
	// say) is recorded again one step at a time, with a warning in the log.
	// 1 records every end alone, as a batch of one (and claims each
	// execution alone, as a batch of one of geneva.start_steps).
	//
	// Defaults to 64, or, for tests and benchmarks, the
	// GENEVA_COMPLETE_BATCH_SIZE environment variable when it is set (read
	// once, in New).
	CompleteBatchSize int

	// HTTP makes the worker run HTTP steps (see HTTPConfig): its workflows'
	// (StepOpts.HTTP) and those of every type defined in the database, in
	// HTTPConfig.Queues. nil runs none: they are left to a worker that does,
	// such as the stock `geneva worker`.
	HTTP *HTTPConfig

	// Housekeeping configures housekeeping, which every worker takes part in
	// (on by default).
	Housekeeping HousekeepingConfig

	// Schedules configures how the worker fires schedules, which every
	// worker takes part in (on by default, every second).
	Schedules ScheduleConfig

	// River is the base of the River client's configuration, for settings
	// Geneva does not set (e.g. FetchCooldown, PeriodicJobs, ID). Geneva adds
	// its worker, the queues (unless Queues is set), the logger (unless Logger
	// is set), FetchPollInterval (unless set: 200 milliseconds, as a backstop
	// for the insert notifications SQL throttles), FetchOnlyKnownKinds and the
	// job timeout.
	//
	// The client hears only River's insert notifications, not its control
	// and leadership ones, which any role that may connect can send: River's
	// queue pauses and resumes (Client.QueuePause) and cancels of running
	// jobs (Client.JobCancel) take effect when the producers next read
	// River's tables, within a minute, and a new leader is elected within
	// about 6 seconds of the last one's resignation.
	//
	// Defaults to River's defaults.
	River *river.Config
}

// Worker runs the steps of workflows: River delivers a job for each step
// execution that SQL schedules, and the worker evaluates the conditions,
// claims the execution (geneva.start_steps), runs the step function and
// reports what happened (geneva.complete_steps, or geneva.fail_step for a
// precondition's error) in the same transaction that completes the job; the
// ends of steps that finish close together share one transaction
// (geneva.complete_steps; see Config.CompleteBatchSize). It decides nothing about a workflow's state.
type Worker struct {
	client      *goclient.Client
	exec        *executor
	housekeeper *housekeeper   // nil when disabled
	firer       *scheduleFirer // nil when disabled
	pool        *pgxpool.Pool
	registry    registry
	river       *river.Client[pgx.Tx]
}

// New makes a worker for the workflows in config, on pool. It checks the
// workflows' definitions; Start registers them in the database.
func New(pool *pgxpool.Pool, config *Config) (*Worker, error) {
	if config == nil {
		config = &Config{}
	}
	exec, err := newExecutor(config)
	if err != nil {
		return nil, err
	}
	exec.recordUntilStopped = true
	switch {
	case config.HeartbeatInterval == 0:
		exec.heartbeat = time.Minute
	case config.HeartbeatInterval > 0:
		exec.heartbeat = config.HeartbeatInterval
	case config.HeartbeatInterval != -1:
		return nil, fmt.Errorf("geneva: negative HeartbeatInterval %s (-1 turns heartbeats off)", config.HeartbeatInterval)
	}
	switch {
	case config.InlineSteps == 0:
		exec.inlineSteps = 20
	case config.InlineSteps > 0:
		exec.inlineSteps = config.InlineSteps
	case config.InlineSteps != -1:
		return nil, fmt.Errorf("geneva: negative InlineSteps %d (-1 turns inline steps off)", config.InlineSteps)
	}
	batchSize, err := completeBatchSize(config)
	if err != nil {
		return nil, err
	}
	exec.batch(pool, batchSize)
	if config.MaxWorkers < 0 {
		return nil, fmt.Errorf("geneva: negative MaxWorkers %d", config.MaxWorkers)
	}
	w := &Worker{
		client:   goclient.New(pool),
		exec:     exec,
		pool:     pool,
		registry: exec.registry,
	}
	logger, reg := exec.logger, exec.registry

	riverConfig := &river.Config{}
	if config.River != nil {
		copied := *config.River
		riverConfig = &copied
	}
	if riverConfig.Workers == nil {
		riverConfig.Workers = river.NewWorkers()
	}
	if err := river.AddWorkerSafely(riverConfig.Workers, &stepWorker{worker: w}); err != nil {
		return nil, fmt.Errorf("geneva: %w", err)
	}
	if riverConfig.Queues == nil {
		maxWorkers := config.MaxWorkers
		if maxWorkers == 0 {
			maxWorkers = 10
		}
		riverConfig.Queues = map[string]river.QueueConfig{}
		for _, queue := range reg.queues(config.HTTP) {
			riverConfig.Queues[queue] = river.QueueConfig{MaxWorkers: maxWorkers}
		}
	}
	if riverConfig.Logger == nil {
		riverConfig.Logger = logger
	}
	if w.housekeeper, err = newHousekeeper(config.Housekeeping, w.client, logger); err != nil {
		return nil, fmt.Errorf("geneva: %w", err)
	}
	if w.firer, err = newScheduleFirer(config.Schedules, w.client, logger); err != nil {
		return nil, fmt.Errorf("geneva: %w", err)
	}
	// SQL sends River's insert notification at most once per queue per 10
	// milliseconds; a producer that missed one finds the job at its next poll.
	if riverConfig.FetchPollInterval == 0 {
		riverConfig.FetchPollInterval = 200 * time.Millisecond
		if riverConfig.FetchCooldown > riverConfig.FetchPollInterval {
			riverConfig.FetchPollInterval = riverConfig.FetchCooldown
		}
	}
	// The queues may hold other jobs of the application's: fetch only the
	// kinds this client works.
	riverConfig.FetchOnlyKnownKinds = true

	w.river, err = river.NewClient(newRiverDriver(pool), riverConfig)
	if err != nil {
		return nil, fmt.Errorf("geneva: %w", err)
	}
	return w, nil
}

// Client returns a client for the application's and operator's SQL API on
// the worker's pool (goclient.New(tx) runs in a transaction).
func (w *Worker) Client() *goclient.Client { return w.client }

// River returns the worker's River client.
func (w *Worker) River() *river.Client[pgx.Tx] { return w.river }

// Register writes the workflows' definitions to the database
// (geneva.define_workflow). Start does it first.
func (w *Worker) Register(ctx context.Context) error {
	return register(ctx, protocol.New(w.pool), w.registry)
}

func register(ctx context.Context, client *protocol.Client, reg registry) error {
	for _, workflowType := range reg.types() {
		if err := client.DefineWorkflow(ctx, workflowType, reg[workflowType].definition); err != nil {
			return fmt.Errorf("geneva: registering workflow %s: %w", workflowType, err)
		}
	}
	return nil
}

// Start registers the workflows' definitions and starts working. It returns
// once the worker runs. ctx is for the start only: canceling it later does
// not stop the worker; Stop does.
func (w *Worker) Start(ctx context.Context) error {
	if err := w.Register(ctx); err != nil {
		return err
	}
	// River would cut running steps off when ctx ends, before Stop could let
	// them finish.
	if err := w.river.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("geneva: starting River: %w", err)
	}
	w.exec.stopping.Store(false) // a worker started again after Stop
	w.exec.completer.start()
	w.exec.claimer.start()
	// the maintenance rounds, like River, outlive ctx until Stop
	if w.housekeeper != nil {
		if err := w.housekeeper.Start(context.WithoutCancel(ctx)); err != nil {
			return err
		}
	}
	if w.firer != nil {
		if err := w.firer.Start(context.WithoutCancel(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops the worker gracefully: it fetches no more steps and waits for the
// running ones to end. When ctx is done first, the running steps' contexts
// are canceled; a step that then returns an error is given back
// (geneva.interrupt_step) and runs again on another worker; Stop waits up to
// 10 more seconds for that. A step cut off harder (the process killed) stays
// in_progress until housekeeping recovers it: never lost.
//
// A step whose outcome the database cannot take (it is down or unreachable)
// keeps its outcome and tries again, waiting up to 5 seconds between tries,
// heartbeating the execution meanwhile, until the database answers: a
// graceful Stop waits for it like for a running step; once ctx ends, the
// worker gives up after a few more tries and leaves the execution to
// housekeeping.
func (w *Worker) Stop(ctx context.Context) error {
	w.exec.stopping.Store(true)
	if w.housekeeper != nil {
		w.housekeeper.Stop()
	}
	if w.firer != nil {
		w.firer.Stop()
	}
	err := w.river.Stop(ctx)
	if err == nil || ctx.Err() == nil {
		w.stopCompleter(true)
		return err
	}
	cutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := w.river.StopAndCancel(cutCtx); err != nil {
		// steps still running record their ends alone, or leave them to
		// housekeeping
		w.stopCompleter(false)
		return fmt.Errorf("geneva: stopping: %w", err)
	}
	w.stopCompleter(true)
	return nil
}

// stopCompleter stops batching normal ends; wait says to wait for the
// batches being recorded (no step is running any more).
func (w *Worker) stopCompleter(wait bool) {
	if wait {
		w.exec.claimer.stop()
		w.exec.completer.stop()
		return
	}
	go w.exec.claimer.stop()
	go w.exec.completer.stop()
}
