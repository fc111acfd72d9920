package tests

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// stepStatsRow is a row of geneva.step_stats, or of its exact twin
// (exactStepStats).
type stepStatsRow struct {
	WorkflowType       string
	StepName           string
	Executions         int64
	Runs               int64
	Outcomes           map[string]int64
	QueueLagP50Seconds *float64
	QueueLagP95Seconds *float64
	RunTimeP50Seconds  *float64
	RunTimeP95Seconds  *float64
}

// exactStepStats computes geneva.step_stats from the executions themselves,
// with percentile_cont over every duration: what the view reads from the
// counts kept as executions end.
const exactStepStats = `
	with e as (
	  select w.workflow_type, e.step_name, e.outcome, e.started_at,
	    extract(epoch from e.started_at - e.scheduled_for)::double precision as lag,
	    extract(epoch from e.finished_at - e.started_at)::double precision as run_time
	  from geneva.step_executions e
	  join geneva.workflows w on w.id = e.workflow_id
	  where e.finished_at >= date_trunc('hour', geneva.now() - interval '24 hours', 'UTC')
	)
	select g.workflow_type, g.step_name, g.executions, g.runs, o.outcomes,
	  g.lag[1], g.lag[2], g.run_time[1], g.run_time[2]
	from (
	  select workflow_type, step_name, count(*) as executions, count(started_at) as runs,
	    percentile_cont(array[0.5, 0.95]) within group (order by lag) as lag,
	    percentile_cont(array[0.5, 0.95]) within group (order by run_time) as run_time
	  from e group by 1, 2
	) g
	join (
	  select workflow_type, step_name, jsonb_object_agg(outcome, n) as outcomes
	  from (select workflow_type, step_name, outcome, count(*) as n from e group by 1, 2, 3) x
	  group by 1, 2
	) o using (workflow_type, step_name)
	order by 1, 2`

// exactThroughput and exactEnded5m compute geneva.step_throughput and the
// executions_ended_5m samples of geneva.engine_metrics from the executions.
const (
	exactThroughput = `
		select date_trunc('minute', finished_at, 'UTC'), outcome, count(*)
		from geneva.step_executions
		where finished_at >= date_trunc('minute', geneva.now(), 'UTC') - interval '59 minutes'
		group by 1, 2 order by 1, 2`
	exactEnded5m = `
		select w.workflow_type, e.step_name, e.outcome, count(*)::double precision
		from geneva.step_executions e join geneva.workflows w on w.id = e.workflow_id
		where e.finished_at >= date_trunc('minute', geneva.now() - interval '5 minutes', 'UTC')
		  and e.finished_at < date_trunc('minute', geneva.now(), 'UTC') + interval '1 minute'
		group by 1, 2, 3 order by 1, 2, 3`
	viewThroughput = `select minute, outcome, executions from geneva.step_throughput order by 1, 2`
	viewEnded5m    = `
		select workflow_type, step_name, label, value from geneva.engine_metrics
		where metric = 'executions_ended_5m' order by 1, 2, 3`
	viewStepStats = `
		select workflow_type, step_name, executions, runs, outcomes,
		  queue_lag_p50_seconds, queue_lag_p95_seconds, run_time_p50_seconds, run_time_p95_seconds
		from geneva.step_stats order by workflow_type, step_name`
)

type throughputRow struct {
	Minute     time.Time
	Outcome    string
	Executions int64
}

type endedRow struct {
	WorkflowType, StepName, Outcome string
	Value                           float64
}

// ownerRows runs a query as the owner on b.conn (the exact twins read the
// tables, which no role may).
func ownerRows[T any](t *testing.T, b *testBundle, sql string) []T {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, sql)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[T])
	require.NoError(t, err)
	return all
}

// requireStepStats holds the view's rows to the exact ones: the counts and
// outcomes equal, each percentile within 1% (and a microsecond, the
// histograms' floor).
func requireStepStats(t *testing.T, want, got []stepStatsRow) {
	t.Helper()
	require.Len(t, got, len(want), "got %+v", got)
	for i := range want {
		w, g := want[i], got[i]
		name := w.WorkflowType + "." + w.StepName
		for _, p := range []struct {
			name      string
			want, got *float64
		}{
			{"queue lag p50", w.QueueLagP50Seconds, g.QueueLagP50Seconds},
			{"queue lag p95", w.QueueLagP95Seconds, g.QueueLagP95Seconds},
			{"run time p50", w.RunTimeP50Seconds, g.RunTimeP50Seconds},
			{"run time p95", w.RunTimeP95Seconds, g.RunTimeP95Seconds},
		} {
			if p.want == nil {
				require.Nil(t, p.got, "%s %s", name, p.name)
				continue
			}
			require.NotNil(t, p.got, "%s %s", name, p.name)
			require.LessOrEqual(t, math.Abs(*p.got-*p.want), 0.01*math.Abs(*p.want)+1e-6,
				"%s %s: %v, exactly %v", name, p.name, *p.got, *p.want)
		}
		w.QueueLagP50Seconds, w.QueueLagP95Seconds, w.RunTimeP50Seconds, w.RunTimeP95Seconds = nil, nil, nil, nil
		g.QueueLagP50Seconds, g.QueueLagP95Seconds, g.RunTimeP50Seconds, g.RunTimeP95Seconds = nil, nil, nil, nil
		require.Equal(t, w, g)
	}
}

// TestExecutionCounts: geneva.step_stats, geneva.step_throughput and
// engine_metrics' executions_ended_5m read counts kept as executions end
// (migrations/001_create_schema.sql), not the executions; they must say
// what the executions say, through housekeeping's folds, history imported
// already ended, retention, and writers ending executions concurrently.
func TestExecutionCounts(t *testing.T) {
	t.Parallel()

	t.Run("TheViewsSayWhatTheExecutionsSay", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		start := t0.Add(-2 * time.Hour)
		b.setNow(t, start)
		b.define(t, "Counted", `{"steps": [
			{"name": "a", "on_exception": {"action": "reattempt", "wait": "10 seconds", "max_reattempts": null}},
			{"name": "b"}, {"name": "c"}]}`)
		b.define(t, "Other", `{"steps": [{"name": "only"}]}`)
		// (the exact figures read the live executions: the folds' rounds
		// move nothing into history, docs/history.md)
		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_move_after => interval '1000 years')")
		require.NoError(t, err)

		// durations from under a microsecond to an hour, spread over two
		// hours so that several minutes and hours hold counts
		lags := []time.Duration{0, time.Microsecond / 2, 3 * time.Millisecond, 40 * time.Millisecond, 2 * time.Second, 95 * time.Second, 7 * time.Minute}
		runTimes := []time.Duration{time.Millisecond, 15 * time.Millisecond, 250 * time.Millisecond, 4 * time.Second, 61 * time.Second, time.Hour}
		end := func(i int, workflowType string) {
			id := b.create(t, workflowType, fmt.Sprint("hero-", i))
			for step := 0; ; step++ {
				execution := b.active(t, id)
				b.setNow(t, execution.ScheduledFor)
				switch {
				case i%11 == 3 && step == 0: // never runs: skipped by an operator
					if b.call(t, "skip_step", id) == "finished" {
						return
					}
					continue
				case i%13 == 5 && step == 1: // never runs: canceled by its condition
					_, ok := b.startStep(t, execution.ID, ptr("cancel"))
					require.False(t, ok)
					return
				}
				executionID := b.viewRunFor(t, id, lags[(i+step)%len(lags)], runTimes[(i*3+step)%len(runTimes)])
				switch {
				case i%5 == 1 && step == 0:
					// reattempted in 10 s (Counted), paused (Other)
					if b.fail(t, executionID, []string{"Timeout"}, "i/o timeout").WorkflowState != "ready" {
						return
					}
				case i%7 == 2 && step == 2:
					b.fail(t, executionID, []string{"Boom"}, "boom") // paused
					return
				default:
					if b.complete(t, executionID, "success", nil).WorkflowState == "finished" {
						return
					}
				}
			}
		}
		check := func(stage string) {
			t.Helper()
			t.Log(stage)
			requireStepStats(t, ownerRows[stepStatsRow](t, b, exactStepStats), viewRows[stepStatsRow](t, b, viewStepStats))
			require.Equal(t, ownerRows[throughputRow](t, b, exactThroughput), viewRows[throughputRow](t, b, viewThroughput), stage)
			require.Equal(t, ownerRows[endedRow](t, b, exactEnded5m), viewRows[endedRow](t, b, viewEnded5m), stage)
		}
		fold := func() {
			t.Helper()
			_, err := b.conn.Exec(b.ctx, "select geneva.housekeep(p_keep_forever => true)")
			require.NoError(t, err)
			var deltas int
			require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.ended_execution_deltas").Scan(&deltas))
			require.Zero(t, deltas, "folded")
		}
		for i := range 40 {
			start = start.Add(3 * time.Minute)
			b.setNow(t, start)
			end(i, []string{"Counted", "Counted", "Other"}[i%3])
			if i == 20 {
				b.setNow(t, start.Add(2*time.Minute))
				check("before a fold")
				fold()
				check("after a fold")
			}
		}
		// the last minutes' ends are counted in hours and minutes folded before
		b.setNow(t, start.Add(3*time.Minute))
		check("ends after a fold")
		fold()
		check("after a second fold")

		// history imported already ended is counted as it is inserted
		_, err = b.conn.Exec(b.ctx, `
			with w as (
			  insert into geneva.workflows (workflow_type, hero_type, hero_id, state, created_at, updated_at, transitioned_at, finished_at)
			  select 'Other', 'User', 'import-' || g, 'finished', geneva.now(), geneva.now(), geneva.now(), geneva.now()
			  from generate_series(1, 5) g
			  returning id)
			insert into geneva.step_executions (workflow_id, step_name, state, outcome, scheduled_for, started_at, completed_at, finished_at, created_at, updated_at)
			select id, 'only', 'completed', 'success', geneva.now() - interval '3 minutes', geneva.now() - interval '150 seconds',
			  geneva.now() - interval '2 minutes', geneva.now() - interval '2 minutes', geneva.now(), geneva.now()
			from w`)
		require.NoError(t, err)
		check("imported")
		// history older than any view reads is not counted at all
		var deltas int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.ended_execution_deltas").Scan(&deltas))
		_, err = b.conn.Exec(b.ctx, `
			with w as (
			  insert into geneva.workflows (workflow_type, hero_type, hero_id, state, created_at, updated_at, transitioned_at, finished_at)
			  select 'Other', 'User', 'old-' || g, 'finished', geneva.now() - interval '27 hours', geneva.now(), geneva.now(), geneva.now()
			  from generate_series(1, 5) g
			  returning id)
			insert into geneva.step_executions (workflow_id, step_name, state, outcome, scheduled_for, started_at, completed_at, finished_at, created_at, updated_at)
			select id, 'only', 'completed', 'success', geneva.now() - interval '27 hours', geneva.now() - interval '27 hours',
			  geneva.now() - interval '27 hours', geneva.now() - interval '27 hours', geneva.now(), geneva.now()
			from w`)
		require.NoError(t, err)
		var after int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.ended_execution_deltas").Scan(&after))
		require.Equal(t, deltas, after)
		check("old history imported")

		// the counts outlive the executions: retention takes the executions,
		// not what the views say of the last day
		b.setNow(t, start.Add(5*time.Hour)) // every workflow has ended by then
		before := viewRows[stepStatsRow](t, b, viewStepStats)
		requireStepStats(t, ownerRows[stepStatsRow](t, b, exactStepStats), before)
		_, err = b.conn.Exec(b.ctx, "select geneva.housekeep(p_retention => interval '0')")
		require.NoError(t, err)
		var left int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows where state in ('finished', 'canceled')").Scan(&left))
		require.Zero(t, left)
		require.Equal(t, before, viewRows[stepStatsRow](t, b, viewStepStats))

		// the windows move on: minutes go after two hours, hours after 26
		later := start.Add(8 * time.Hour)
		b.setNow(t, later)
		fold()
		require.Empty(t, viewRows[throughputRow](t, b, viewThroughput))
		require.Equal(t, before, viewRows[stepStatsRow](t, b, viewStepStats))
		var minutes, hourRows int
		require.NoError(t, b.conn.QueryRow(b.ctx, `select
			(select count(*) from geneva.ended_executions_by_minute), (select count(*) from geneva.ended_executions_by_hour)`).Scan(&minutes, &hourRows))
		require.Zero(t, minutes)
		require.NotZero(t, hourRows)
		b.setNow(t, later.Add(27*time.Hour))
		fold()
		require.Empty(t, viewRows[stepStatsRow](t, b, viewStepStats))
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.ended_executions_by_hour").Scan(&hourRows))
		require.Zero(t, hourRows)
	})

	// The windows the docs give, read off the clock rather than the views'
	// own expressions: step_stats from the start of the UTC hour 24 hours
	// ago, step_throughput from the minute 59 minutes before the current one,
	// executions_ended_5m from the minute five minutes before it, the current
	// minute included (an end counts at once).
	t.Run("TheWindowsAreWholeHoursAndMinutes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Window", `{"steps": [{"name": "a"}]}`)
		now := time.Date(2030, 1, 3, 12, 30, 20, 0, time.UTC) // half past the hour
		endAt := func(hero string, at time.Time) {
			t.Helper()
			b.setNow(t, at.Add(-time.Second))
			id := b.create(t, "Window", hero)
			b.complete(t, b.viewRunFor(t, id, 0, time.Second), "success", nil)
		}
		endAt("in 24h20m ago", now.Add(-24*time.Hour-20*time.Minute))  // 11:10 the day before: in (from 11:00)
		endAt("out 24h40m ago", now.Add(-24*time.Hour-40*time.Minute)) // 10:50 the day before: out
		endAt("out 60m ago", now.Add(-60*time.Minute))                 // 11:30:20: not in the last hour's minutes (from 11:31)
		endAt("in 59m ago", now.Add(-59*time.Minute-20*time.Second))   // 11:31:00: in
		endAt("in this minute", now.Add(-10*time.Second))              // 12:30:10: in
		endAt("in 5m20s ago", now.Add(-5*time.Minute-20*time.Second))  // 12:25:00: in
		endAt("out 5m21s ago", now.Add(-5*time.Minute-21*time.Second)) // 12:24:59: out
		b.setNow(t, now)
		for _, fold := range []bool{false, true} {
			if fold {
				_, err := b.conn.Exec(b.ctx, "select geneva.housekeep(p_keep_forever => true)")
				require.NoError(t, err)
			}
			stats := viewRows[stepStatsRow](t, b, viewStepStats)
			require.Len(t, stats, 1)
			require.Equal(t, int64(6), stats[0].Executions, "all but the one before 11:00 the day before (fold %t)", fold)
			var throughput int64
			for _, row := range viewRows[throughputRow](t, b, viewThroughput) {
				throughput += row.Executions
			}
			require.Equal(t, int64(4), throughput, "from 11:31 on (fold %t)", fold)
			ended := viewRows[endedRow](t, b, viewEnded5m)
			require.Len(t, ended, 1)
			require.Equal(t, 2.0, ended[0].Value, "from 12:25:00 on (fold %t)", fold)
		}
	})

	// Writers ending executions one by one and in batches on their own
	// connections while housekeeping folds on another: every end is counted
	// once, whichever fold or delta holds it.
	t.Run("ConcurrentEndsAndFolds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Busy", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)
		const writers, workflows = 4, 30
		var wg sync.WaitGroup
		done := make(chan struct{})
		folds := 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := dbtest.NewConn(t, b.conf)
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := conn.Exec(b.ctx, "select geneva.housekeep(p_keep_forever => true)"); err != nil {
					t.Error(err)
					return
				}
				folds++
			}
		}()
		errs := make(chan error, writers)
		var writersDone sync.WaitGroup
		for w := range writers {
			writersDone.Add(1)
			go func() {
				defer writersDone.Done()
				errs <- func() error {
					conn := dbtest.NewConn(t, b.conf)
					var ids []int64
					for i := range workflows {
						var id int64
						if err := conn.QueryRow(b.ctx, "select geneva.create_workflow('Busy', 'User', $1)", fmt.Sprint(w, "-", i)).Scan(&id); err != nil {
							return err
						}
						ids = append(ids, id)
					}
					for step := range 3 {
						var executions []int64
						for _, id := range ids {
							var executionID int64
							err := conn.QueryRow(b.ctx, `select (geneva.start_step(e.id)).execution_id from geneva.step_executions e
								where e.workflow_id = $1 and e.state = 'scheduled'`, id).Scan(&executionID)
							if err != nil {
								return err
							}
							executions = append(executions, executionID)
						}
						if step == 1 { // one by one
							for _, id := range executions {
								if _, err := conn.Exec(b.ctx, "select geneva.complete_step($1, 'success')", id); err != nil {
									return err
								}
							}
							continue
						}
						n := len(executions)
						signals, waits, jobs, cont := make([]string, n), make([]*time.Duration, n), make([]*int64, n), make([]bool, n)
						for i := range signals {
							signals[i] = "success"
						}
						if _, err := conn.Exec(b.ctx, "select geneva.complete_steps($1, $2, $3, $4, $5)", executions, signals, waits, jobs, cont); err != nil {
							return err
						}
					}
					return nil
				}()
			}()
		}
		writersDone.Wait()
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.NotZero(t, folds, "no fold ran beside the writers")
		t.Logf("%d folds ran beside the writers", folds)

		check := func() {
			t.Helper()
			got := viewRows[stepStatsRow](t, b, viewStepStats)
			requireStepStats(t, ownerRows[stepStatsRow](t, b, exactStepStats), got)
			require.Len(t, got, 3)
			for _, row := range got {
				require.Equal(t, int64(writers*workflows), row.Executions, row.StepName)
			}
		}
		check()
		_, err := b.conn.Exec(b.ctx, "select geneva.housekeep(p_keep_forever => true)")
		require.NoError(t, err)
		check()
	})
}
