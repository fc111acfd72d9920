package goclient_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
)

func TestSchedules(t *testing.T) {
	t.Parallel()

	t.Run("CreatePauseResumeFireDelete", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		id, err := client.CreateSchedule(ctx, "digest", "*/5 * * * *", "Two", "Team", "ops",
			&goclient.ScheduleOpts{Timezone: "Europe/Berlin", CatchUp: "all", AllowMultiple: true})
		require.NoError(t, err)
		again, err := client.CreateSchedule(ctx, "digest", "*/5 * * * *", "Two", "Team", "ops",
			&goclient.ScheduleOpts{Timezone: "Europe/Berlin", CatchUp: "all", AllowMultiple: true})
		require.NoError(t, err)
		require.Equal(t, id, again)

		schedules, err := client.Schedules(ctx)
		require.NoError(t, err)
		require.Len(t, schedules, 1)
		s := schedules[0]
		require.Equal(t, "digest", s.Name)
		require.Equal(t, "Europe/Berlin", s.Timezone)
		require.Equal(t, "all", s.CatchUp)
		require.True(t, s.AllowMultiple)
		require.False(t, s.Paused)
		require.WithinDuration(t, time.Now(), s.NextFireAt, 5*time.Minute+time.Second)
		require.Zero(t, s.NextFireAt.Unix()%300, "on a slot")

		require.NoError(t, client.PauseSchedule(ctx, "digest"))
		schedules, err = client.Schedules(ctx)
		require.NoError(t, err)
		require.True(t, schedules[0].Paused)
		require.NoError(t, client.ResumeSchedule(ctx, "digest"))

		n, err := client.FireSchedules(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "not due")
		firings, err := client.ScheduleFirings(ctx, "digest", false, 10)
		require.NoError(t, err)
		require.Empty(t, firings)

		require.NoError(t, client.DeleteSchedule(ctx, "digest"))
		schedules, err = client.Schedules(ctx)
		require.NoError(t, err)
		require.Empty(t, schedules)
	})

	t.Run("FiresUnderTheTestClock", func(t *testing.T) {
		t.Parallel()
		ctx, pool, _, _ := setup(t)
		conn, err := pool.Acquire(ctx) // one connection: the test clock is its setting
		require.NoError(t, err)
		t.Cleanup(conn.Release)
		client := goclient.New(conn)
		start := time.Date(2030, 1, 1, 12, 0, 30, 0, time.UTC)
		setClock := func(at time.Time) {
			_, err := conn.Exec(ctx, "select set_config('geneva.fake_now', $1, false)", at.Format(time.RFC3339))
			require.NoError(t, err)
		}
		setClock(start)
		_, err = client.CreateSchedule(ctx, "minutely", "* * * * *", "Two", "User", "1", nil)
		require.NoError(t, err)
		setClock(start.Add(30 * time.Second))
		n, err := client.FireSchedules(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		setClock(start.Add(90 * time.Second))
		n, err = client.FireSchedules(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "User 1's workflow is still ongoing")

		firings, err := client.ScheduleFirings(ctx, "", true, 0)
		require.NoError(t, err)
		require.Len(t, firings, 1)
		require.True(t, firings[0].Skipped)
		require.Contains(t, *firings[0].SkippedReason, "User 1")
		schedules, err := client.Schedules(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1), schedules[0].FiredCount)
		require.Equal(t, int64(1), schedules[0].SkippedCount)
		require.Equal(t, goclient.WorkflowState("ready"), *schedules[0].LastWorkflowState)
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		_, err := client.CreateSchedule(ctx, "s", "* * * * mon-xyz", "Two", "User", "1", nil)
		require.ErrorIs(t, err, goclient.ErrInvalidArgument)
		_, err = client.CreateSchedule(ctx, "s", "* * * * *", "Two", "User", "1", &goclient.ScheduleOpts{Timezone: "Nowhere/Else"})
		require.ErrorIs(t, err, goclient.ErrInvalidArgument)
		_, err = client.CreateSchedule(ctx, "s", "* * * * *", "Nope", "User", "1", nil)
		require.ErrorIs(t, err, goclient.ErrUnknownWorkflowType)
		for _, call := range []func() error{
			func() error { return client.PauseSchedule(ctx, "nope") },
			func() error { return client.ResumeSchedule(ctx, "nope") },
			func() error { return client.DeleteSchedule(ctx, "nope") },
		} {
			require.ErrorIs(t, call(), goclient.ErrNotFound)
		}
	})
}
