package tests

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// s0, a Tuesday noon in UTC, is where the schedules' clock starts.
var s0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// scheduleRow is a schedule as geneva.schedule_list shows it.
type scheduleRow struct {
	ID                int64
	Name              string
	Cron              string
	Timezone          string
	WorkflowType      string
	HeroType          string
	HeroID            string
	AllowMultiple     bool
	CatchUp           string
	Paused            bool
	PausedAt          *time.Time
	NextFireAt        time.Time
	LastSlot          *time.Time
	LastFiredAt       *time.Time
	LastWorkflowID    *int64
	LastWorkflowState *string
	LastSkippedSlot   *time.Time
	LastSkipReason    *string
	FiredCount        int64
	SkippedCount      int64
	LagSeconds        float64
	CreatedAt         time.Time
	UpdatedAt         time.Time
	UpdatedBy         string
}

func (b *testBundle) schedule(t *testing.T, name string) scheduleRow {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select * from geneva.schedule_list where name = $1", name)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[scheduleRow])
	require.NoError(t, err)
	return row
}

// createSchedule creates a schedule of ThreeSteps for User 1 in UTC.
func (b *testBundle) createSchedule(t *testing.T, name, cron, catchUp string, allowMultiple bool) int64 {
	t.Helper()
	var id int64
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select geneva.create_schedule($1, $2, 'ThreeSteps', 'User', '1', 'UTC', $3, $4)",
		name, cron, catchUp, allowMultiple).Scan(&id))
	return id
}

func (b *testBundle) fire(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.fire_schedules()").Scan(&n))
	return n
}

type firingRow struct {
	Slot          time.Time
	WorkflowID    *int64
	SkippedReason *string
}

// firings lists a schedule's firings, oldest slot first.
func (b *testBundle) firings(t *testing.T, name string) []firingRow {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, `
		select slot, workflow_id, skipped_reason from geneva.schedule_firing_list
		where schedule_name = $1 order by slot`, name)
	require.NoError(t, err)
	firings, err := pgx.CollectRows(rows, pgx.RowToStructByPos[firingRow])
	require.NoError(t, err)
	return firings
}

func (b *testBundle) workflowCount(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows").Scan(&n))
	return n
}

func TestFireSchedules(t *testing.T) {
	t.Parallel()

	t.Run("ASlotFiresOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0.Add(30*time.Second))
		b.defineThreeSteps(t)
		b.createSchedule(t, "digest", "*/5 * * * *", "latest", false)
		require.Equal(t, s0.Add(5*time.Minute), b.schedule(t, "digest").NextFireAt.UTC())

		b.setNow(t, s0.Add(5*time.Minute-time.Second))
		require.Zero(t, b.fire(t), "not due yet")
		b.setNow(t, s0.Add(5*time.Minute))
		require.Equal(t, 1, b.fire(t))
		require.Zero(t, b.fire(t), "fired already")
		b.setNow(t, s0.Add(6*time.Minute))
		require.Zero(t, b.fire(t))

		firings := b.firings(t, "digest")
		require.Len(t, firings, 1)
		require.Equal(t, s0.Add(5*time.Minute), firings[0].Slot.UTC())
		require.NotNil(t, firings[0].WorkflowID)
		w := b.workflow(t, *firings[0].WorkflowID)
		require.Equal(t, "ThreeSteps", w.WorkflowType)
		require.Equal(t, "a", b.active(t, w.ID).StepName)

		s := b.schedule(t, "digest")
		require.Equal(t, s0.Add(10*time.Minute), s.NextFireAt.UTC())
		require.Equal(t, s0.Add(5*time.Minute), s.LastSlot.UTC())
		require.Equal(t, s0.Add(5*time.Minute), s.LastFiredAt.UTC())
		require.Equal(t, w.ID, *s.LastWorkflowID)
		require.Equal(t, "ready", *s.LastWorkflowState)
		require.Equal(t, int64(1), s.FiredCount)
		require.Zero(t, s.SkippedCount)
		require.Zero(t, s.LagSeconds)

		b.setNow(t, s0.Add(12*time.Minute))
		require.InDelta(t, 120, b.schedule(t, "digest").LagSeconds, 0.001, "due two minutes ago, not fired")
	})

	t.Run("AnOngoingHerosSlotIsRecordedAsSkipped", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		b.createSchedule(t, "every minute", "* * * * *", "latest", false)
		b.setNow(t, s0.Add(time.Minute))
		require.Equal(t, 1, b.fire(t))
		first := *b.schedule(t, "every minute").LastWorkflowID

		b.setNow(t, s0.Add(2*time.Minute))
		require.Zero(t, b.fire(t), "User 1 still has its ThreeSteps workflow")
		firings := b.firings(t, "every minute")
		require.Len(t, firings, 2)
		require.Nil(t, firings[1].WorkflowID)
		require.Contains(t, *firings[1].SkippedReason, "User 1")
		s := b.schedule(t, "every minute")
		require.Equal(t, int64(1), s.FiredCount)
		require.Equal(t, int64(1), s.SkippedCount)
		require.Equal(t, s0.Add(2*time.Minute), s.LastSkippedSlot.UTC())
		require.Equal(t, first, *s.LastWorkflowID)
		require.Equal(t, s0.Add(3*time.Minute), s.NextFireAt.UTC())

		b.call(t, "cancel_workflow", first)
		b.setNow(t, s0.Add(3*time.Minute))
		require.Equal(t, 1, b.fire(t), "the hero's workflow ended: the next slot creates one")
		require.NotEqual(t, first, *b.schedule(t, "every minute").LastWorkflowID)
	})

	t.Run("AllowMultipleCreatesBesideAnOngoingOne", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		b.createSchedule(t, "many", "* * * * *", "latest", true)
		for i := 1; i <= 3; i++ {
			b.setNow(t, s0.Add(time.Duration(i)*time.Minute))
			require.Equal(t, 1, b.fire(t))
		}
		require.Equal(t, 3, b.workflowCount(t))
	})

	t.Run("APausedScheduleFiresNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		b.createSchedule(t, "paused", "* * * * *", "all", true)
		_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule('paused')")
		require.NoError(t, err)
		for i := 1; i <= 5; i++ {
			b.setNow(t, s0.Add(time.Duration(i)*time.Hour))
			require.Zero(t, b.fire(t))
		}
		require.Zero(t, b.workflowCount(t))
		require.Empty(t, b.firings(t, "paused"))
		require.Zero(t, b.schedule(t, "paused").LagSeconds, "a paused schedule is not late")
	})

	// A week of downtime (no worker fired, or the schedule was paused), then
	// each catch-up.
	week := 7 * 24 * time.Hour
	t.Run("CatchUpLatestFiresTheNewestMissedSlot", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0.Add(time.Minute))
		b.defineThreeSteps(t)
		b.createSchedule(t, "hourly", "0 * * * *", "latest", true)
		_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule('hourly')")
		require.NoError(t, err)
		b.setNow(t, s0.Add(week+30*time.Minute))
		_, err = b.conn.Exec(b.ctx, "select geneva.resume_schedule('hourly')")
		require.NoError(t, err)
		require.Equal(t, 1, b.fire(t))
		require.Zero(t, b.fire(t))
		firings := b.firings(t, "hourly")
		require.Len(t, firings, 1)
		require.Equal(t, s0.Add(week), firings[0].Slot.UTC())
		require.Equal(t, s0.Add(week+time.Hour), b.schedule(t, "hourly").NextFireAt.UTC())
	})

	// Issue 44, item 7: a schedule of every minute of January, last fired in
	// January and fired again in November (no worker ran, or it was paused
	// and resumed), has ten months behind it and some 31,000 minutes of
	// January it did not fire. Catch-up found the newest by walking every
	// one of them (seconds a schedule, 50 s here); it finds it directly now.
	t.Run("CatchUpAfterMonthsDoesNotWalkTheMissedSlots", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		jan := time.Date(2030, 1, 10, 12, 0, 0, 0, time.UTC)
		b.setNow(t, jan)
		b.defineThreeSteps(t)
		names := []string{"latest paused", "latest down", "none paused", "none down"}
		for _, name := range names {
			b.createSchedule(t, name, "* * * 1 *", strings.Fields(name)[0], true)
		}
		b.setNow(t, jan.Add(time.Minute))
		require.Equal(t, len(names), b.fire(t), "each fires 12:01 on 10 January")
		for _, name := range []string{"latest paused", "none paused"} {
			_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule($1)", name)
			require.NoError(t, err)
		}
		b.setNow(t, jan.Add(time.Minute+30*time.Second))
		require.Zero(t, b.fire(t), "nothing due: this compiles fire_schedules")

		nov := time.Date(2030, 11, 15, 12, 0, 0, 0, time.UTC)
		b.setNow(t, nov)
		for _, name := range []string{"latest paused", "none paused"} {
			_, err := b.conn.Exec(b.ctx, "select geneva.resume_schedule($1)", name)
			require.NoError(t, err)
		}
		// a bound that fails fast where the walk is back (it took seconds a
		// schedule), and one the issue states (10 ms a schedule) with room
		// for a loaded machine
		_, err := b.conn.Exec(b.ctx, "set statement_timeout = '5s'")
		require.NoError(t, err)
		start := time.Now()
		require.Equal(t, 2, b.fire(t), "the latest schedules fire 23:59 on 31 January")
		elapsed := time.Since(start)
		t.Logf("fire_schedules: %s for %d schedules", elapsed, len(names))
		require.Less(t, elapsed/time.Duration(len(names)), 200*time.Millisecond, "a schedule's catch-up")

		newest := time.Date(2030, 1, 31, 23, 59, 0, 0, time.UTC)
		nextJan := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, name := range names {
			firings := b.firings(t, name)
			s := b.schedule(t, name)
			require.Equal(t, nextJan, s.NextFireAt.UTC(), name)
			if strings.HasPrefix(name, "latest") {
				require.Len(t, firings, 2, name)
				require.Equal(t, newest, firings[1].Slot.UTC(), name)
			} else {
				require.Len(t, firings, 1, name)
			}
		}
	})

	t.Run("CatchUpAllFiresEveryMissedSlotOldestFirst100ACall", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0.Add(time.Minute))
		b.defineThreeSteps(t)
		b.createSchedule(t, "hourly", "0 * * * *", "all", true)
		b.setNow(t, s0.Add(week+30*time.Minute)) // no worker for a week
		require.Equal(t, 100, b.fire(t))
		require.Equal(t, s0.Add(101*time.Hour), b.schedule(t, "hourly").NextFireAt.UTC(), "due still")
		require.Equal(t, 68, b.fire(t))
		require.Zero(t, b.fire(t))
		firings := b.firings(t, "hourly")
		require.Len(t, firings, 168)
		for i, f := range firings {
			require.Equal(t, s0.Add(time.Duration(i+1)*time.Hour), f.Slot.UTC())
			require.NotNil(t, f.WorkflowID)
		}
		require.Equal(t, 168, b.workflowCount(t))
	})

	t.Run("CatchUpAllWithoutMultipleSkipsWhileTheFirstRuns", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0.Add(time.Minute))
		b.defineThreeSteps(t)
		b.createSchedule(t, "hourly", "0 * * * *", "all", false)
		b.setNow(t, s0.Add(5*time.Hour+30*time.Minute))
		require.Equal(t, 1, b.fire(t))
		s := b.schedule(t, "hourly")
		require.Equal(t, int64(1), s.FiredCount)
		require.Equal(t, int64(4), s.SkippedCount)
	})

	t.Run("CatchUpNoneFiresNoMissedSlot", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0.Add(time.Minute))
		b.defineThreeSteps(t)
		b.createSchedule(t, "hourly", "0 * * * *", "none", true)
		_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule('hourly')")
		require.NoError(t, err)
		b.setNow(t, s0.Add(week+30*time.Minute))
		_, err = b.conn.Exec(b.ctx, "select geneva.resume_schedule('hourly')")
		require.NoError(t, err)
		require.Zero(t, b.fire(t))
		require.Empty(t, b.firings(t, "hourly"))
		require.Equal(t, s0.Add(week+time.Hour), b.schedule(t, "hourly").NextFireAt.UTC())

		b.setNow(t, s0.Add(week+time.Hour+59*time.Second))
		require.Equal(t, 1, b.fire(t), "a slot within a minute of its time fires")
		b.setNow(t, s0.Add(week+2*time.Hour+61*time.Second))
		require.Zero(t, b.fire(t), "one more than a minute late does not")
	})

	t.Run("TwoFirersRacingCreateOneWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		b.createSchedule(t, "race", "* * * * *", "latest", true)

		// scripted: A fires in an open transaction; B neither waits nor fires
		a, c := b.session(t), b.session(t)
		setNowOn(t, a.conn, s0.Add(time.Minute))
		setNowOn(t, c.conn, s0.Add(time.Minute))
		tx, err := a.conn.Begin(b.ctx)
		require.NoError(t, err)
		var n int
		require.NoError(t, tx.QueryRow(b.ctx, "select geneva.fire_schedules()").Scan(&n))
		require.Equal(t, 1, n)
		done := inBackground(func() error {
			return c.conn.QueryRow(b.ctx, "select geneva.fire_schedules()").Scan(&n)
		})
		require.NoError(t, receive(t, done), "skip locked: B does not wait for A")
		require.Zero(t, n)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, c.conn.QueryRow(b.ctx, "select geneva.fire_schedules()").Scan(&n))
		require.Zero(t, n, "A's commit moved the schedule on")
		require.Equal(t, 1, b.workflowCount(t))

		// free for all: 8 connections fire 20 schedules' slots at once
		for i := range 20 {
			_, err := b.conn.Exec(b.ctx,
				"select geneva.create_schedule('race ' || $1, '*/2 * * * *', 'ThreeSteps', 'User', $1, 'UTC', 'latest', true)", strconv.Itoa(i))
			require.NoError(t, err)
		}
		var wg sync.WaitGroup
		created := make([]int, 8)
		start := make(chan struct{})
		for i := range created {
			conn := dbtest.NewConn(t, b.conf)
			setNowOn(t, conn, s0.Add(2*time.Minute))
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for range 3 {
					var n int
					if err := conn.QueryRow(b.ctx, "select geneva.fire_schedules()").Scan(&n); err != nil {
						t.Error(err)
						return
					}
					created[i] += n
				}
			}()
		}
		close(start)
		wg.Wait()
		total := 0
		for _, n := range created {
			total += n
		}
		// "race" (every minute) and the 20 others, each once for 12:02
		require.Equal(t, 21, total)
		require.Equal(t, 22, b.workflowCount(t))
		var slots int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select count(*) from geneva.schedule_firings where slot = $1", s0.Add(2*time.Minute)).Scan(&slots))
		require.Equal(t, 21, slots)
	})

	t.Run("KeepsTheNewest1000Firings", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.define(t, "Nothing", `{"steps": []}`) // finishes at once
		_, err := b.conn.Exec(b.ctx, "select geneva.create_schedule('minutely', '* * * * *', 'Nothing', 'User', '1', 'UTC', 'all')")
		require.NoError(t, err)
		b.setNow(t, s0.Add(1100*time.Minute))
		for range 11 {
			require.Equal(t, 100, b.fire(t))
		}
		firings := b.firings(t, "minutely")
		require.Len(t, firings, 1000)
		require.Equal(t, s0.Add(101*time.Minute), firings[0].Slot.UTC())
		require.Equal(t, int64(1100), b.schedule(t, "minutely").FiredCount)
	})

	t.Run("FiresInTheSchedulesZone", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		_, err := b.conn.Exec(b.ctx,
			"select geneva.create_schedule('berlin', '0 9 * * mon-fri', 'ThreeSteps', 'User', '1', 'Europe/Berlin')")
		require.NoError(t, err)
		// Wednesday 2 January 2030, 09:00 in Berlin (UTC+1)
		require.Equal(t, time.Date(2030, 1, 2, 8, 0, 0, 0, time.UTC), b.schedule(t, "berlin").NextFireAt.UTC())
	})
}
