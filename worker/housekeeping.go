package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/geneva-dev/geneva/goclient"
)

// HousekeepingConfig configures the worker's housekeeping: a River periodic
// job, run by the leader among the workers, that deletes finished and
// canceled workflows past their retention and recovers stuck executions
// (geneva.housekeep).
type HousekeepingConfig struct {
	// Disabled turns housekeeping off (run `geneva housekeep` instead).
	Disabled bool

	// Interval is how often it runs.
	//
	// Defaults to 1 minute.
	Interval time.Duration

	// Queue is the River queue of the housekeeping job. The worker must work
	// it (River.Queues, when set, must list it).
	//
	// Defaults to "default" when the worker works it, else to the first of
	// the workflows' queues in alphabetical order.
	Queue string

	// Params are the thresholds (retention, stuck after, recovery action).
	//
	// Defaults to goclient's: 30 days, 1 hour, 15 minutes, reattempt.
	Params goclient.HousekeepParams
}

// HousekeepArgs are the arguments of the housekeeping job.
type HousekeepArgs struct{}

// Kind is the River job kind of housekeeping.
func (HousekeepArgs) Kind() string { return "geneva_housekeep" }

type housekeepWorker struct {
	river.WorkerDefaults[HousekeepArgs]
	client *goclient.Client
	logger *slog.Logger
	params goclient.HousekeepParams
}

// Work runs rounds of housekeeping, each a short transaction, until one
// finds nothing more to do.
func (h *housekeepWorker) Work(ctx context.Context, job *river.Job[HousekeepArgs]) error {
	var total goclient.HousekeepResult
	for {
		result, err := h.client.Housekeep(ctx, &h.params)
		if err != nil {
			return err
		}
		total.Add(result)
		if !result.More {
			break
		}
	}
	if total != (goclient.HousekeepResult{}) {
		h.logger.InfoContext(ctx, "geneva: housekeeping",
			slog.Int("workflows_cleaned_up", total.WorkflowsCleanedUp),
			slog.Int("step_executions_cleaned_up", total.StepExecutionsCleanedUp),
			slog.Int("stuck_in_progress_recovered", total.StuckInProgressRecovered),
			slog.Int("stuck_scheduled_recovered", total.StuckScheduledRecovered),
			slog.Int("orphans_repaired", total.OrphansRepaired))
	}
	return nil
}

// addHousekeeping adds the housekeeping worker and periodic job to a River
// configuration (whose Queues are set), in its queue.
func addHousekeeping(riverConfig *river.Config, config HousekeepingConfig, client *goclient.Client, logger *slog.Logger, workflowQueues []string) error {
	if config.Disabled {
		return nil
	}
	if config.Interval < 0 {
		return fmt.Errorf("negative housekeeping interval %s", config.Interval)
	}
	queue := config.Queue
	if queue == "" {
		queue = "default"
		if _, ok := riverConfig.Queues[queue]; !ok && len(workflowQueues) > 0 {
			queue = workflowQueues[0]
		}
	}
	if _, ok := riverConfig.Queues[queue]; !ok {
		return fmt.Errorf("housekeeping queue %q is not among the worker's queues", queue)
	}
	err := river.AddWorkerSafely(riverConfig.Workers, &housekeepWorker{client: client, logger: logger, params: config.Params})
	if err != nil {
		return err
	}
	interval := config.Interval
	if interval == 0 {
		interval = time.Minute
	}
	riverConfig.PeriodicJobs = append(riverConfig.PeriodicJobs, river.NewPeriodicJob(
		river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) {
			return HousekeepArgs{}, &river.InsertOpts{Queue: queue, MaxAttempts: 1}
		},
		&river.PeriodicJobOpts{ID: "geneva_housekeep", RunOnStart: true},
	))
	return nil
}
