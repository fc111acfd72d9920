package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// viewRows runs a query as a dashboard would, on a connection of a member of
// geneva_reader, with b.conn's settings (views read geneva.now() and the
// session's thresholds), and collects its rows into structs by position.
func viewRows[T any](t *testing.T, b *testBundle, sql string, args ...any) []T {
	t.Helper()
	if b.reader == nil {
		b.reader = dbtest.NewConnAs(t, b.conf, dbtest.Reader)
	}
	_, err := b.reader.Exec(b.ctx, `select set_config(name, coalesce(value, ''), false)
		from unnest($1::text[], $2::text[]) s(name, value)`, viewSettings, b.settings(t, viewSettings))
	require.NoError(t, err)
	rows, err := b.reader.Query(b.ctx, sql, args...)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[T])
	require.NoError(t, err)
	return all
}

// viewSettings are the settings of b.conn that viewRows copies.
var viewSettings = []string{"geneva.fake_now", "geneva.stuck_in_progress_after", "geneva.stuck_scheduled_after"}

// settings returns the values of settings on b.conn (NULL when unset).
func (b *testBundle) settings(t *testing.T, names []string) []*string {
	t.Helper()
	var values []*string
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select array_agg(current_setting(name, true) order by n) from unnest($1::text[]) with ordinality s(name, n)",
		names).Scan(&values))
	return values
}

// viewRunFor starts the workflow's active execution at its scheduled time +
// lag and moves the clock on by runTime, ready for the step's result.
func (b *testBundle) viewRunFor(t *testing.T, workflowID int64, lag, runTime time.Duration) int64 {
	t.Helper()
	execution := b.active(t, workflowID)
	b.setNow(t, execution.ScheduledFor.Add(lag))
	started := b.run(t, workflowID)
	b.setNow(t, started.StartedAt.Add(runTime))
	return started.ExecutionID
}

func TestViews(t *testing.T) {
	t.Parallel()

	t.Run("PausedWorkflows", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		b.defineFailing(t, "") // the default policy pauses

		// an operator pauses a ready workflow whose step b is due at t0+1h
		byOperator := b.create(t, "ThreeSteps", "operator")
		b.complete(t, b.run(t, byOperator).ExecutionID, "success", nil)
		keptOverdue := b.active(t, byOperator)
		b.setNow(t, t0.Add(10*time.Minute))
		b.call(t, "pause_workflow", byOperator)

		// the pause signal
		b.setNow(t, t0.Add(20*time.Minute))
		bySignal := b.create(t, "ThreeSteps", "signal")
		b.complete(t, b.run(t, bySignal).ExecutionID, "pause", nil)

		// an error (the default policy)
		b.setNow(t, t0.Add(hours(1)))
		byError := b.create(t, "Failing", "error")
		started := b.run(t, byError)
		b.setNow(t, t0.Add(hours(1)+2*time.Minute))
		b.fail(t, started.ExecutionID, []string{"Timeout", "*net.OpError"}, "i/o timeout")

		// an operator pauses a workflow whose step b is not due yet
		b.setNow(t, t0.Add(150*time.Minute))
		notYetDue := b.create(t, "ThreeSteps", "early")
		b.complete(t, b.run(t, notYetDue).ExecutionID, "success", nil)
		keptLater := b.active(t, notYetDue)
		b.call(t, "pause_workflow", notYetDue)

		// not paused: ready, performing with a pause requested, finished, canceled
		b.guardWorkflowIn(t, "ready", "ready")
		pauseRequested := b.guardWorkflowIn(t, "performing", "performing")
		b.call(t, "pause_workflow", pauseRequested)
		b.guardWorkflowIn(t, "finished", "finished")
		b.guardWorkflowIn(t, "canceled", "canceled")

		b.setNow(t, t0.Add(hours(3)))
		type pausedRow struct {
			WorkflowID       int64
			WorkflowType     string
			HeroType         string
			HeroID           string
			NextStepName     *string
			PausedAt         time.Time
			PausedFor        time.Duration
			ErrorStepName    *string
			ErrorOutcome     *string
			LastErrorClass   *string
			LastErrorMessage *string
			LastErrorAt      *time.Time
			KeptExecutionID  *int64
			KeptScheduledFor *time.Time
			KeptOverdueBy    *time.Duration
		}
		got := viewRows[pausedRow](t, b, `
			select workflow_id, workflow_type, hero_type, hero_id, next_step_name, paused_at, paused_for,
			  error_step_name, error_outcome, last_error_class, last_error_message, last_error_at,
			  kept_execution_id, kept_scheduled_for, kept_overdue_by
			from geneva.paused_workflows
			order by workflow_id`)

		// Only an operator's pause keeps an execution; without one, every
		// kept_ column is NULL (how overdue a missing execution is means nothing).
		require.Equal(t, []pausedRow{
			{
				WorkflowID: byOperator, WorkflowType: "ThreeSteps", HeroType: "User", HeroID: "operator",
				NextStepName: ptr("b"), PausedAt: t0.Add(10 * time.Minute), PausedFor: 170 * time.Minute,
				KeptExecutionID: ptr(keptOverdue.ID), KeptScheduledFor: ptr(t0.Add(hours(1))), KeptOverdueBy: ptr(hours(2)),
			},
			{
				WorkflowID: bySignal, WorkflowType: "ThreeSteps", HeroType: "User", HeroID: "signal",
				NextStepName: ptr("a"), PausedAt: t0.Add(20 * time.Minute), PausedFor: 160 * time.Minute,
			},
			{
				WorkflowID: byError, WorkflowType: "Failing", HeroType: "User", HeroID: "error",
				NextStepName: ptr("a"), PausedAt: t0.Add(62 * time.Minute), PausedFor: 118 * time.Minute,
				ErrorStepName: ptr("a"), ErrorOutcome: ptr("paused_by_exception"),
				LastErrorClass: ptr("Timeout"), LastErrorMessage: ptr("i/o timeout"), LastErrorAt: ptr(t0.Add(62 * time.Minute)),
			},
			{
				WorkflowID: notYetDue, WorkflowType: "ThreeSteps", HeroType: "User", HeroID: "early",
				NextStepName: ptr("b"), PausedAt: t0.Add(150 * time.Minute), PausedFor: 30 * time.Minute,
				KeptExecutionID: ptr(keptLater.ID), KeptScheduledFor: ptr(t0.Add(210 * time.Minute)), KeptOverdueBy: ptr(time.Duration(0)),
			},
		}, got)
	})

	t.Run("StepStats", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Stats", `{"steps": [{"name": "a"}, {"name": "b"}]}`)
		b.define(t, "Other", `{"steps": [{"name": "a"}]}`)
		now := t0.Add(hours(48))

		// ended 25 hours ago: outside the window
		b.setNow(t, now.Add(-hours(27)))
		old := b.create(t, "Stats", "old")
		b.complete(t, b.viewRunFor(t, old, hours(1), hours(1)), "success", nil)

		// step a: queue lags 0, 10, 20, 30 s and run times 60, 120, 180, 240 s
		b.setNow(t, now.Add(-hours(10)))
		first := b.create(t, "Stats", "1")
		b.complete(t, b.viewRunFor(t, first, 0, 60*time.Second), "success", nil)
		b.complete(t, b.viewRunFor(t, first, 5*time.Second, 7*time.Second), "success", nil) // step b
		b.setNow(t, now.Add(-hours(9)))
		second := b.create(t, "Stats", "2")
		b.complete(t, b.viewRunFor(t, second, 10*time.Second, 120*time.Second), "success", nil)
		b.setNow(t, now.Add(-hours(8)))
		third := b.create(t, "Stats", "3")
		b.complete(t, b.viewRunFor(t, third, 20*time.Second, 180*time.Second), "reattempt", nil)
		b.setNow(t, now.Add(-hours(7)))
		fourth := b.create(t, "Stats", "4")
		b.fail(t, b.viewRunFor(t, fourth, 30*time.Second, 240*time.Second), []string{"Boom"}, "boom")
		// and one that never ran
		b.setNow(t, now.Add(-hours(6)))
		fifth := b.create(t, "Stats", "5")
		b.setNow(t, now.Add(-hours(6)+time.Minute))
		b.call(t, "skip_step", fifth)

		// another type, whose only execution never ran
		b.setNow(t, now.Add(-hours(5)))
		other := b.create(t, "Other", "1")
		_, ok := b.startStep(t, b.active(t, other).ID, ptr("cancel"))
		require.False(t, ok)

		b.setNow(t, now)
		// percentiles within 1% of percentile_cont's (requireStepStats)
		requireStepStats(t, []stepStatsRow{
			{
				WorkflowType: "Other", StepName: "a", Executions: 1, Runs: 0,
				Outcomes: map[string]int64{"canceled_by_condition": 1},
			},
			{
				WorkflowType: "Stats", StepName: "a", Executions: 5, Runs: 4,
				Outcomes: map[string]int64{
					"success": 2, "reattempted": 1, "paused_by_exception": 1, "skipped_externally": 1,
				},
				// percentile_cont: p50 halfway between the middle two, p95 at
				// 0.95 * 3 = 2.85 of the way through the sorted values
				QueueLagP50Seconds: ptr(15.0), QueueLagP95Seconds: ptr(28.5),
				RunTimeP50Seconds: ptr(150.0), RunTimeP95Seconds: ptr(231.0),
			},
			{
				WorkflowType: "Stats", StepName: "b", Executions: 1, Runs: 1,
				Outcomes:           map[string]int64{"success": 1},
				QueueLagP50Seconds: ptr(5.0), QueueLagP95Seconds: ptr(5.0),
				RunTimeP50Seconds: ptr(7.0), RunTimeP95Seconds: ptr(7.0),
			},
		}, viewRows[stepStatsRow](t, b, viewStepStats))
	})

	t.Run("StuckExecutions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		now := t0.Add(hours(2))

		silent := b.create(t, "ThreeSteps", "silent")
		b.run(t, silent)
		checkpointed := b.create(t, "ThreeSteps", "checkpointed")
		checkpointedID := b.run(t, checkpointed).ExecutionID
		silentJustOverAnHour := b.create(t, "ThreeSteps", "61m")
		silentAnHour := b.create(t, "ThreeSteps", "60m")
		jobGone := b.create(t, "ThreeSteps", "job-gone")
		b.guardExec(t, "delete from public.river_job where id = $1", *b.active(t, jobGone).JobID)
		jobWaits := b.create(t, "ThreeSteps", "job-waits")
		paused := b.create(t, "ThreeSteps", "paused") // its kept execution is overdue
		b.call(t, "pause_workflow", paused)
		b.guardExec(t, "delete from public.river_job where id = $1", *b.active(t, paused).JobID)
		notDue := b.create(t, "ThreeSteps", "not-due")
		notDueA := b.run(t, notDue).ExecutionID

		b.setNow(t, t0.Add(59*time.Minute))
		b.run(t, silentJustOverAnHour)
		b.setNow(t, t0.Add(hours(1)))
		b.run(t, silentAnHour)
		b.setNow(t, t0.Add(90*time.Minute))
		b.guardExec(t, `select geneva.checkpoint_step($1, '{"page": 2}')`, checkpointedID)
		b.complete(t, notDueA, "success", nil) // b is due at t0+2h30m
		b.setNow(t, now.Add(-10*time.Minute))
		recentlyOverdue := b.create(t, "ThreeSteps", "recent")
		b.guardExec(t, "delete from public.river_job where id = $1", *b.active(t, recentlyOverdue).JobID)

		b.setNow(t, now)
		type stuckRow struct {
			ExecutionID  int64
			WorkflowID   int64
			WorkflowType string
			HeroType     string
			HeroID       string
			StepName     string
			State        string
			ScheduledFor time.Time
			StartedAt    *time.Time
			RunningFor   *time.Duration
			SilentFor    *time.Duration
			OverdueBy    *time.Duration
			JobID        *int64
		}
		row := func(workflowID int64, heroID, state string, startedAt *time.Time, runningFor, silentFor, overdueBy *time.Duration) stuckRow {
			execution := b.active(t, workflowID)
			return stuckRow{
				ExecutionID: execution.ID, WorkflowID: workflowID, WorkflowType: "ThreeSteps", HeroType: "User",
				HeroID: heroID, StepName: "a", State: state, ScheduledFor: execution.ScheduledFor,
				StartedAt: startedAt, RunningFor: runningFor, SilentFor: silentFor, OverdueBy: overdueBy,
				JobID: execution.JobID,
			}
		}
		query := `
			select execution_id, workflow_id, workflow_type, hero_type, hero_id, step_name, state,
			  scheduled_for, started_at, running_for, silent_for, overdue_by, job_id
			from geneva.stuck_executions
			order by execution_id`
		got := viewRows[stuckRow](t, b, query)

		// not listed: checkpointed 30 minutes ago, silent for exactly an hour,
		// overdue by only 10 minutes, paused, not due
		require.Equal(t, []stuckRow{
			row(silent, "silent", "in_progress", ptr(t0), ptr(hours(2)), ptr(hours(2)), nil),
			row(silentJustOverAnHour, "61m", "in_progress", ptr(t0.Add(59*time.Minute)), ptr(61*time.Minute), ptr(61*time.Minute), nil),
			row(jobGone, "job-gone", "scheduled", nil, nil, nil, ptr(hours(2))),
			row(jobWaits, "job-waits", "scheduled", nil, nil, nil, ptr(hours(2))),
		}, got)

		// a session's own thresholds
		b.guardExec(t, "set geneva.stuck_in_progress_after = '20 minutes'")
		b.guardExec(t, "set geneva.stuck_scheduled_after = '5 minutes'")
		got = viewRows[stuckRow](t, b, query)
		require.Equal(t, []stuckRow{
			row(silent, "silent", "in_progress", ptr(t0), ptr(hours(2)), ptr(hours(2)), nil),
			row(checkpointed, "checkpointed", "in_progress", ptr(t0), ptr(hours(2)), ptr(30*time.Minute), nil),
			row(silentJustOverAnHour, "61m", "in_progress", ptr(t0.Add(59*time.Minute)), ptr(61*time.Minute), ptr(61*time.Minute), nil),
			row(silentAnHour, "60m", "in_progress", ptr(t0.Add(hours(1))), ptr(hours(1)), ptr(hours(1)), nil),
			row(jobGone, "job-gone", "scheduled", nil, nil, nil, ptr(hours(2))),
			row(jobWaits, "job-waits", "scheduled", nil, nil, nil, ptr(hours(2))),
			row(recentlyOverdue, "recent", "scheduled", nil, nil, nil, ptr(10*time.Minute)),
		}, got)
	})

	t.Run("WorkflowCounts", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		b.define(t, "Empty", `{"steps": []}`)

		for i, state := range []string{"ready", "ready", "performing", "paused", "canceled", "canceled", "finished"} {
			b.guardWorkflowIn(t, state, "three-"+string(rune('a'+i)))
		}
		for _, hero := range []string{"1", "2"} {
			id := b.create(t, "One", hero)
			b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		}
		b.create(t, "One", "3")
		require.Equal(t, "finished", b.workflow(t, b.create(t, "Empty", "1")).State)

		type countRow struct {
			WorkflowType string
			State        string
			Workflows    int64
		}
		got := viewRows[countRow](t, b, `
			select workflow_type, state, workflows
			from geneva.workflow_counts
			order by workflow_type, state`)

		require.Equal(t, []countRow{
			{"Empty", "finished", 1},
			{"One", "finished", 2},
			{"One", "ready", 1},
			{"ThreeSteps", "canceled", 2},
			{"ThreeSteps", "finished", 1},
			{"ThreeSteps", "paused", 1},
			{"ThreeSteps", "performing", 1},
			{"ThreeSteps", "ready", 2},
		}, got)
	})

	// Ended workflows are counted as they end, not by reading the history:
	// the counts stay right through housekeeping's fold, retention deleting
	// ended workflows, and history inserted already ended.
	t.Run("WorkflowCountsKeptAsWorkflowsEnd", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		type countRow struct {
			WorkflowType string
			State        string
			Workflows    int64
		}
		counts := func() []countRow {
			return viewRows[countRow](t, b, `
				select workflow_type, state, workflows from geneva.workflow_counts order by workflow_type, state`)
		}
		// the truth, counted from the table itself
		truth := func() []countRow {
			rows, err := b.conn.Query(b.ctx, `
				select workflow_type, state, count(*) from geneva.workflows
				group by workflow_type, state order by workflow_type, state`)
			require.NoError(t, err)
			all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[countRow])
			require.NoError(t, err)
			return all
		}
		for i, state := range []string{"ready", "performing", "paused", "canceled", "canceled", "finished"} {
			b.guardWorkflowIn(t, state, fmt.Sprint("a", i))
		}
		require.Equal(t, truth(), counts())

		var raw string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.housekeep(p_keep_forever => true)::text").Scan(&raw))
		var deltas int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.ended_workflow_count_deltas").Scan(&deltas))
		require.Zero(t, deltas, "folded")
		require.Equal(t, truth(), counts())

		// more end after the fold; history is imported already ended
		b.guardWorkflowIn(t, "finished", "b1")
		b.guardWorkflowIn(t, "canceled", "b2")
		_, err := b.conn.Exec(b.ctx, `
			insert into geneva.workflows (workflow_type, hero_type, hero_id, state, created_at, updated_at, transitioned_at, finished_at)
			select 'ThreeSteps', 'User', 'import-' || g, 'finished', now() - interval '1 year', now() - interval '1 year', now() - interval '1 year', now() - interval '1 year'
			from generate_series(1, 3) g`)
		require.NoError(t, err)
		require.Equal(t, truth(), counts())

		// retention deletes every ended workflow
		b.setNow(t, t0.Add(400*24*time.Hour))
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.housekeep(p_retention => interval '1 day')::text").Scan(&raw))
		require.Equal(t, truth(), counts())
		for _, row := range counts() {
			require.NotContains(t, []string{"finished", "canceled"}, row.State, "no ended workflow left, no row for it")
		}
	})

	t.Run("WorkflowTimeline", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Timeline", `{"steps": [
			{"name": "a", "on_exception": {"action": "reattempt", "wait": "30 seconds"}},
			{"name": "b"}, {"name": "c"}]}`)
		at := func(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }
		secs := func(seconds int) *time.Duration { return ptr(time.Duration(seconds) * time.Second) }

		id := b.create(t, "Timeline", "1")
		b.create(t, "Timeline", "2") // another workflow's rows are filtered out
		b.setNow(t, at(5))
		first := b.run(t, id).ExecutionID
		b.setNow(t, at(15))
		b.fail(t, first, []string{"Timeout"}, "i/o timeout") // a again at +30 s
		b.setNow(t, at(50))
		second := b.run(t, id).ExecutionID
		b.setNow(t, at(70))
		b.complete(t, second, "reattempt", ptr(time.Minute))
		b.setNow(t, at(140))
		third := b.run(t, id).ExecutionID
		b.setNow(t, at(150))
		b.complete(t, third, "success", nil)
		skipped := b.active(t, id).ID
		b.setNow(t, at(180))
		b.call(t, "skip_step", id)
		running := b.run(t, id).ExecutionID

		type timelineRow struct {
			WorkflowID      int64
			WorkflowType    string
			HeroType        string
			HeroID          string
			ExecutionID     int64
			StepName        string
			State           string
			Outcome         *string
			ScheduledFor    time.Time
			StartedAt       *time.Time
			FinishedAt      *time.Time
			QueueLag        *time.Duration
			RunTime         *time.Duration
			ErrorClassName  *string
			ErrorMessage    *string
			ReattemptReason *string
		}
		got := viewRows[timelineRow](t, b, `
			select workflow_id, workflow_type, hero_type, hero_id, execution_id, step_name, state, outcome,
			  scheduled_for, started_at, finished_at, queue_lag, run_time,
			  error_class_name, error_message, reattempt_reason
			from geneva.workflow_timeline
			where workflow_id = $1
			order by execution_id`, id)

		row := timelineRow{WorkflowID: id, WorkflowType: "Timeline", HeroType: "User", HeroID: "1"}
		with := func(f func(r *timelineRow)) timelineRow {
			r := row
			f(&r)
			return r
		}
		require.Equal(t, []timelineRow{
			with(func(r *timelineRow) {
				r.ExecutionID, r.StepName, r.State, r.Outcome = first, "a", "completed", ptr("reattempted_by_exception")
				r.ScheduledFor, r.StartedAt, r.FinishedAt = at(0), ptr(at(5)), ptr(at(15))
				r.QueueLag, r.RunTime = secs(5), secs(10)
				r.ErrorClassName, r.ErrorMessage, r.ReattemptReason = ptr("Timeout"), ptr("i/o timeout"), ptr("exception_policy")
			}),
			with(func(r *timelineRow) {
				r.ExecutionID, r.StepName, r.State, r.Outcome = second, "a", "completed", ptr("reattempted")
				r.ScheduledFor, r.StartedAt, r.FinishedAt = at(45), ptr(at(50)), ptr(at(70))
				r.QueueLag, r.RunTime = secs(5), secs(20)
				r.ReattemptReason = ptr("flow_control")
			}),
			with(func(r *timelineRow) {
				r.ExecutionID, r.StepName, r.State, r.Outcome = third, "a", "completed", ptr("success")
				r.ScheduledFor, r.StartedAt, r.FinishedAt = at(130), ptr(at(140)), ptr(at(150))
				r.QueueLag, r.RunTime = secs(10), secs(10)
			}),
			with(func(r *timelineRow) {
				r.ExecutionID, r.StepName, r.State, r.Outcome = skipped, "b", "skipped", ptr("skipped_externally")
				r.ScheduledFor, r.FinishedAt = at(150), ptr(at(180))
			}),
			with(func(r *timelineRow) {
				r.ExecutionID, r.StepName, r.State = running, "c", "in_progress"
				r.ScheduledFor, r.StartedAt = at(180), ptr(at(180))
				r.QueueLag = secs(0)
			}),
		}, got)
	})

	// what each step does, from the stored definition (issue 47)
	t.Run("DefinitionSteps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.conn.Exec(b.ctx, "select geneva.define_limit('payments_api', p_rate => 100, p_per => '1 minute')")
		require.NoError(t, err)
		b.define(t, "Checkout", `{"steps": [
			{"name": "reserve", "on_exception": {"action": "reattempt", "wait": "30 seconds"}},
			{"name": "charge", "wait": "1 hour", "limits": ["payments_api"], "skip_if": "already_paid"},
			{"name": "approve", "await": {"event": "approved", "timeout": "3 days"}},
			{"name": "notify", "await": {"event": "shipped", "timeout": 60, "on_timeout": "skip"},
			 "http": {"url": "https://hooks.example.com/notify", "queue": "hooks"}}],
			"queue": "shop"}`)
		b.define(t, "Other", `{"steps": [{"name": "x"}]}`) // filtered out

		type stepRow struct {
			Position     int
			StepName     string
			Wait         time.Duration
			Queue        string
			HTTPURL      *string
			Version      int
			AwaitEvent   *string
			AwaitTimeout *time.Duration
			OnTimeout    *string
			Limits       []string
			SkipIf       *string
			OnException  *string
		}
		got := viewRows[stepRow](t, b, `
			select position, step_name, wait, queue, http_url, version, await_event, await_timeout, on_timeout,
			  limits, skip_if::text, on_exception::text
			from geneva.definition_steps
			where workflow_type = 'Checkout'
			order by position`)
		require.Equal(t, []stepRow{
			{Position: 1, StepName: "reserve", Queue: "shop", Version: 1,
				OnException: ptr(`{"wait": "30 seconds", "action": "reattempt"}`)},
			{Position: 2, StepName: "charge", Wait: time.Hour, Queue: "shop", Version: 1,
				Limits: []string{"payments_api"}, SkipIf: ptr(`"already_paid"`)},
			{Position: 3, StepName: "approve", Queue: "shop", Version: 1,
				AwaitEvent: ptr("approved"), AwaitTimeout: ptr(72 * time.Hour), OnTimeout: ptr("run")},
			{Position: 4, StepName: "notify", Queue: "hooks", Version: 1, HTTPURL: ptr("https://hooks.example.com/notify"),
				AwaitEvent: ptr("shipped"), AwaitTimeout: ptr(time.Minute), OnTimeout: ptr("skip")},
		}, got)
	})

	// the event a step received, on every attempt of the step (issue 47)
	t.Run("WorkflowTimelineEvents", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Approval", `{"steps": [
			{"name": "ask"},
			{"name": "decide", "await": {"event": "approved", "timeout": "1 day"},
			 "on_exception": {"action": "reattempt", "wait": "1 minute"}}]}`)
		id := b.create(t, "Approval", "1")
		ask := b.run(t, id).ExecutionID
		b.complete(t, ask, "success", nil)
		b.setNow(t, t0.Add(time.Minute))
		_, err := b.conn.Exec(b.ctx, `select geneva.send_event($1, 'approved', '{"by": "mia"}')`, id)
		require.NoError(t, err)
		var eventID int64
		var sender string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select max(id), session_user from geneva.events").Scan(&eventID, &sender))
		first := b.run(t, id).ExecutionID
		b.fail(t, first, []string{"Timeout"}, "i/o timeout") // reattempted: the same event again
		b.setNow(t, t0.Add(3*time.Minute))
		second := b.run(t, id).ExecutionID

		type eventRow struct {
			ExecutionID  int64
			EventID      *int64
			EventName    *string
			EventPayload *string
			EventSentBy  *string
			EventSentAt  *time.Time
		}
		got := viewRows[eventRow](t, b, `
			select execution_id, event_id, event_name, event_payload::text, event_sent_by, event_sent_at
			from geneva.workflow_timeline
			where workflow_id = $1
			order by execution_id`, id)
		received := func(execution int64) eventRow {
			return eventRow{ExecutionID: execution, EventID: &eventID, EventName: ptr("approved"),
				EventPayload: ptr(`{"by": "mia"}`), EventSentBy: &sender, EventSentAt: ptr(t0.Add(time.Minute))}
		}
		require.Equal(t, []eventRow{{ExecutionID: ask}, received(first), received(second)}, got)
	})

}
