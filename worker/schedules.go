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

// scheduleFirer calls geneva.fire_schedules on a timer, until stopped.
type scheduleFirer struct {
	client   *goclient.Client
	logger   *slog.Logger
	interval time.Duration

	cancel context.CancelFunc
	done   chan struct{}
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
	return &scheduleFirer{client: client, logger: logger, interval: interval}, nil
}

// start fires in a goroutine until stop.
func (f *scheduleFirer) start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.done = make(chan struct{})
	go func() {
		defer close(f.done)
		var wait time.Duration // the first call at once
		for {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			f.fire(ctx)
			wait = f.interval - f.interval/10 + rand.N(f.interval/5+1)
		}
	}()
}

// stop ends the calls, rolling back one under way (another worker fires its
// slots), and waits for them.
func (f *scheduleFirer) stop() {
	if f.cancel == nil {
		return
	}
	f.cancel()
	<-f.done
	f.cancel = nil
}

// fire fires what is due: one call, and more while a call returns as many as
// it may create in one go (a backlog after downtime).
func (f *scheduleFirer) fire(ctx context.Context) {
	for range 10 {
		created, err := f.client.FireSchedules(ctx)
		if err != nil {
			if ctx.Err() == nil {
				f.logger.WarnContext(ctx, "geneva: firing schedules failed; trying again later", slog.String("error", err.Error()))
			}
			return
		}
		if created > 0 {
			f.logger.DebugContext(ctx, "geneva: schedules fired", slog.Int("workflows_created", created))
		}
		if created < 100 {
			return
		}
	}
}
