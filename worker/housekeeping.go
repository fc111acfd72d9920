package worker

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// HousekeepingConfig configures the worker's housekeeping, which deletes
// finished and canceled workflows past their retention and recovers stuck
// executions (geneva.housekeep). Every worker takes part: each checks at
// start, then at random times between a quarter and a half of the round
// interval apart, whether a round is due (geneva.housekeep_if_due); the first
// to find one due runs it, and the others skip it. Recovery so goes on while
// any worker runs, with no leader to wait for.
//
// The thresholds (retention, stuck after, recovery action, batch size) and
// the round interval are not the worker's to choose: they are the operators'
// housekeeping settings in the database
// (goclient.Client.SetHousekeepingSettings, `geneva housekeep settings`),
// which every worker's rounds read, so that workers sharing a database always
// agree and a worker's role cannot make a round delete or recover more.
//
// The worst case: a step whose worker died is recovered at most the
// stuck-in-progress setting + 1.5 × the round interval (plus the round's own
// run time) after its last sign of life (its start, a checkpoint or a
// heartbeat, sent every Config.HeartbeatInterval while it runs), as long as
// one worker runs; a scheduled step whose job was lost, the stuck-scheduled
// setting + 1.5 × the round interval after it was due (`geneva housekeep
// settings` shows the three settings).
type HousekeepingConfig struct {
	// Disabled turns housekeeping off in this worker (run `geneva housekeep`
	// or another worker instead).
	Disabled bool

	// Interval is how often a round runs, among all workers: a worker runs
	// one when none started within Interval. A non-zero Interval overrides
	// the setting for this worker's checks (tests use it).
	//
	// Defaults (0) to the housekeeping settings' round interval, which the
	// worker reads at each check and geneva.housekeep_if_due applies.
	Interval time.Duration
}

// settingsRetry is how soon a worker checks again when it has no round
// interval to wait for: the settings could not be read yet (the database is
// down; after a read, a failed one keeps the last interval read), or the
// setting is zero (every check runs a round). It is no default interval: the
// round's interval is still SQL's setting (geneva.housekeep_if_due given
// NULL), and an early check finds no round due.
const settingsRetry = 5 * time.Second

// housekeeper checks whether a round of housekeeping is due, and runs it,
// at Start and then at random times (nextWait) until Stop, which cancels a
// round under way (its transaction rolls back; another worker runs the next).
type housekeeper struct {
	periodic[housekeepingCheck]

	client *goclient.Client
	logger *slog.Logger
	// interval is HousekeepingConfig.Interval: zero sends NULL (the setting)
	interval time.Duration
	// setting is the settings' round interval as last read; zero until a
	// read succeeds
	setting time.Duration
}

// housekeepingCheck is what one check did: the rounds it ran (none when none
// was due, or another worker ran it), their results added up, and the error
// that ended it, if any. Only tests read it (periodic.signal).
type housekeepingCheck struct {
	Rounds int
	Total  goclient.HousekeepResult
	Err    error
}

// newHousekeeper checks the configuration; nil when housekeeping is disabled.
func newHousekeeper(config HousekeepingConfig, client *goclient.Client, logger *slog.Logger) (*housekeeper, error) {
	if config.Disabled {
		return nil, nil
	}
	if config.Interval < 0 {
		return nil, fmt.Errorf("negative housekeeping interval %s", config.Interval)
	}
	h := &housekeeper{client: client, logger: logger, interval: config.Interval}
	h.round, h.wait = h.runIfDue, h.nextWait
	return h, nil
}

// nextWait is how long to wait before the next check: a quarter to a half
// of the configured interval, or else of the settings' round interval, read
// now so that an operator's change reaches every worker by its next check.
// A failed read (logged) keeps the last interval read; with none, or a zero
// setting, the next check is in settingsRetry.
func (h *housekeeper) nextWait(ctx context.Context) time.Duration {
	interval := h.interval
	if interval == 0 {
		settings, err := h.client.HousekeepingSettings(ctx)
		switch {
		case err == nil:
			h.setting = settings.RoundInterval
		case ctx.Err() == nil:
			h.logger.WarnContext(ctx, "geneva: reading the housekeeping round interval failed; keeping the last one read",
				slog.String("error", err.Error()))
		}
		interval = h.setting
	}
	if interval <= 0 {
		return settingsRetry
	}
	return interval/4 + rand.N(interval/4+1)
}

// runIfDue runs rounds, each a short transaction, while they are due: one
// unless a round finds more to do than its batch.
func (h *housekeeper) runIfDue(ctx context.Context) housekeepingCheck {
	var check housekeepingCheck
	total := &check.Total
	for {
		result, err := h.client.HousekeepIfDue(ctx, h.interval)
		if err != nil {
			if ctx.Err() == nil {
				h.logger.WarnContext(ctx, "geneva: housekeeping failed; trying again later", slog.String("error", err.Error()))
			}
			check.Err = err
			break
		}
		if result == nil {
			break // not due, or another worker runs it
		}
		check.Rounds++
		total.Add(result)
		if !result.More {
			break
		}
	}
	if *total != (goclient.HousekeepResult{}) {
		h.logger.InfoContext(ctx, "geneva: housekeeping",
			slog.Int("workflows_cleaned_up", total.WorkflowsCleanedUp),
			slog.Int("step_executions_cleaned_up", total.StepExecutionsCleanedUp),
			slog.Int("workflows_moved", total.WorkflowsMoved),
			slog.Int("partitions_dropped", total.PartitionsDropped),
			slog.Int("partitions_detached", total.PartitionsDetached),
			slog.Int("stuck_in_progress_recovered", total.StuckInProgressRecovered),
			slog.Int("stuck_scheduled_recovered", total.StuckScheduledRecovered),
			slog.Int("orphans_repaired", total.OrphansRepaired))
	}
	return check
}
