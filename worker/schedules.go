package worker

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// ScheduleConfig configures how the worker fires schedules
// (geneva.create_schedule, goclient.Client.CreateSchedule, `geneva schedule
// create`). Every worker takes part, with no leader: each calls
// geneva.fire_schedules at start and then every Interval (give or take a
// tenth, so that workers started together do not call in step), and the
// database fires each due slot exactly once, whoever calls (skip locked: a
// call never waits for another's).
//
// The worst case, as long as one worker runs: a slot fires within Interval
// (plus a tenth) of its time, plus the call's own run time; with the
// default, within about 1.1 seconds.
type ScheduleConfig struct {
	// Disabled turns firing off in this worker (another worker, or a
	// `geneva schedule fire` of your own, fires them instead).
	Disabled bool

	// Interval is how often this worker fires the due schedules.
	//
	// Defaults to 1 second.
	Interval time.Duration
}

// scheduleFirer calls geneva.fire_schedules at Start and then every interval,
// give or take a tenth (nextWait), until Stop, which rolls back a call under
// way (another worker fires its slots).
type scheduleFirer struct {
	periodic[firing]

	client   *goclient.Client
	logger   *slog.Logger
	interval time.Duration
}

// firing is what one firing did: the workflows its calls created, and the
// error that ended it, if any. Only tests read it (periodic.signal).
type firing struct {
	Created int
	Err     error
}

// newScheduleFirer checks the configuration; nil when firing is disabled.
func newScheduleFirer(config ScheduleConfig, client *goclient.Client, logger *slog.Logger) (*scheduleFirer, error) {
	if config.Disabled {
		return nil, nil
	}
	if config.Interval < 0 {
		return nil, fmt.Errorf("negative schedule interval %s", config.Interval)
	}
	interval := config.Interval
	if interval == 0 {
		interval = time.Second
	}
	f := &scheduleFirer{client: client, logger: logger, interval: interval}
	f.round, f.wait = f.fire, f.nextWait
	return f, nil
}

// nextWait is the interval, give or take a tenth, so that workers started
// together do not call in step.
func (f *scheduleFirer) nextWait(context.Context) time.Duration {
	return f.interval - f.interval/10 + rand.N(f.interval/5+1)
}

// fire fires what is due: one call, and more while a call returns as many as
// it may create in one go (a backlog after downtime).
func (f *scheduleFirer) fire(ctx context.Context) firing {
	var done firing
	for range 10 {
		created, err := f.client.FireSchedules(ctx)
		if err != nil {
			if ctx.Err() == nil {
				f.logger.WarnContext(ctx, "geneva: firing schedules failed; trying again later", slog.String("error", err.Error()))
			}
			done.Err = err
			return done
		}
		done.Created += created
		if created > 0 {
			f.logger.DebugContext(ctx, "geneva: schedules fired", slog.Int("workflows_created", created))
		}
		if created < 100 {
			return done
		}
	}
	return done
}
