package main

import (
	"context"
	"errors"
	"time"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// teamDigest is the scheduled workflow: a digest of the team's activity,
// collected and sent.
func teamDigest() *worker.Workflow {
	return worker.NewWorkflow("TeamDigest", nil).
		Step("collect", func(ctx context.Context, step *worker.Step) error { return nil }, nil).
		Step("send", func(ctx context.Context, step *worker.Step) error { return nil }, nil)
}

// createDigestSchedule creates the schedule "team-digest": a TeamDigest for
// Team ops every minute (`* * * * *`), replacing the one of an earlier run.
// A minute's cron would keep the demo waiting for its first slot, so it is
// created as of a minute ago, under the test clock of one session: its slot
// has come, and the worker (on the real clock) fires it within a second. The
// demo's own throwaway server allows the test clock; on a database that
// does not (DATABASE_URL), the first slot is the next minute's. It returns
// the slot the worker is to fire, and when it was due (now, or that slot).
func createDigestSchedule(ctx context.Context, env *environment, throwaway bool) (slot, due time.Time, err error) {
	conn, err := env.pool.Acquire(ctx)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	defer conn.Release()
	client := goclient.New(conn)
	if err := client.DeleteSchedule(ctx, "team-digest"); err != nil && !errors.Is(err, goclient.ErrNotFound) {
		return time.Time{}, time.Time{}, err
	}
	if throwaway {
		if _, err := conn.Exec(ctx, "select geneva.allow_fake_clock(true)"); err != nil {
			return time.Time{}, time.Time{}, err
		}
	}
	if _, err := conn.Exec(ctx, "select set_config('geneva.fake_now', (now() - interval '1 minute')::text, false)"); err != nil {
		return time.Time{}, time.Time{}, err
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "reset geneva.fake_now") }()
	if _, err := client.CreateSchedule(ctx, "team-digest", "* * * * *", "TeamDigest", "Team", "ops", nil); err != nil {
		return time.Time{}, time.Time{}, err
	}
	schedules, err := client.Schedules(ctx)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	for _, s := range schedules {
		if s.Name == "team-digest" {
			env.printf("Schedule: select geneva.create_schedule('team-digest', '* * * * *', 'TeamDigest', 'Team', 'ops') -- a digest every minute; first slot %s\n",
				s.NextFireAt.Format("15:04:05"))
			return s.NextFireAt, later(s.NextFireAt, time.Now()), nil
		}
	}
	return time.Time{}, time.Time{}, errors.New("the schedule team-digest vanished")
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// showDigestSchedule waits until the worker has fired the schedule's first
// slot and the digest has finished, then prints what `geneva schedule ls`
// says, and that firing again creates nothing.
func showDigestSchedule(ctx context.Context, env *environment, slot, due time.Time) error {
	var s *goclient.Schedule
	for s == nil || s.LastWorkflowState == nil || *s.LastWorkflowState != goclient.StateFinished {
		schedules, err := env.client.Schedules(ctx)
		if err != nil {
			return err
		}
		for _, found := range schedules {
			if found.Name == "team-digest" && found.FiredCount > 0 {
				s = found
			}
		}
		select {
		case <-ctx.Done():
			return errors.New("the schedule team-digest did not fire in time")
		case <-time.After(50 * time.Millisecond):
		}
	}
	env.printf("\ngeneva schedule ls\n\n")
	env.printf("  team-digest  * * * * *  UTC  TeamDigest for Team ops: slot %s fired %.1fs after it was due (workers fire due schedules every second), workflow %d %s; next %s\n",
		s.LastSlot.Format("15:04:05"), max(0, s.LastFiredAt.Sub(due).Seconds()), *s.LastWorkflowID, *s.LastWorkflowState,
		s.NextFireAt.Format("15:04:05"))
	created, err := env.client.FireSchedules(ctx)
	if err != nil {
		return err
	}
	for created > 0 {
		// a minute turned since the worker fired it: this call fired the new
		// minute's slot, and the next one finds nothing due
		schedules, err := env.client.Schedules(ctx)
		if err != nil {
			return err
		}
		for _, found := range schedules {
			if found.Name == "team-digest" && found.LastSlot != nil {
				slot = *found.LastSlot
			}
		}
		if created, err = env.client.FireSchedules(ctx); err != nil {
			return err
		}
	}
	env.printf("  select geneva.fire_schedules() -> %d: slot %s fired once, whoever calls\n", created, slot.Format("15:04:05"))
	return nil
}
