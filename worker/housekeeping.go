package worker

import (
	"context"
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
		total.WorkflowsDeleted += result.WorkflowsDeleted
		total.StuckInProgressRecovered += result.StuckInProgressRecovered
		total.StuckScheduledRecovered += result.StuckScheduledRecovered
		if !result.More {
			break
		}
	}
	if total != (goclient.HousekeepResult{}) {
		h.logger.InfoContext(ctx, "geneva: housekeeping",
			slog.Int("workflows_deleted", total.WorkflowsDeleted),
			slog.Int("stuck_in_progress_recovered", total.StuckInProgressRecovered),
			slog.Int("stuck_scheduled_recovered", total.StuckScheduledRecovered))
	}
	return nil
}

// addHousekeeping adds the housekeeping worker and periodic job to a River
// configuration, in queue.
func addHousekeeping(riverConfig *river.Config, config HousekeepingConfig, client *goclient.Client, logger *slog.Logger, queue string) error {
	if config.Disabled {
		return nil
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
