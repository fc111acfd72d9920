package failover_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
)

// The load: workflows of five steps, created over createOver.
const (
	loadWorkflowCount = 2000
	createOver        = 8 * time.Second
)

// maxRecoveryAfterPromotion is the bar: the first step recorded on the new
// primary at most this long after its promotion began.
const maxRecoveryAfterPromotion = 15 * time.Second

// housekeepingForTest are housekeeping settings that recover within the
// test: a step whose claim's commit was in doubt (made on the standby, its
// answer lost with the primary) is in progress with no worker running it
// until housekeeping recovers it. The threshold stays above the outage and
// the heartbeat (500 ms), so a live step is never taken for dead.
func housekeepingForTest(t *testing.T, url string) {
	t.Helper()
	pool := newPool(t, url, 2)
	stuck, scheduled, round := 8*time.Second, 20*time.Second, time.Second
	_, err := goclient.New(pool).SetHousekeepingSettings(context.Background(), &goclient.HousekeepingSettingsParams{
		HousekeepParams: goclient.HousekeepParams{StuckInProgressAfter: &stuck, StuckScheduledAfter: &scheduled},
		RoundInterval:   &round,
	})
	require.NoError(t, err)
}

// TestSynchronousFailover: a primary with a synchronous standby is killed
// (SIGKILL) under load and the standby promoted. Every workflow finishes,
// nothing committed is lost, no step's success is recorded twice and no step
// runs twice; the worker's and the application's connections, River's
// listener and the workers' housekeeping come back by themselves; the time
// from the promotion to the first step recorded on the new primary is
// measured.
func TestSynchronousFailover(t *testing.T) {
	skipUnlessAsked(t)
	ctx := context.Background()
	p := startPair(t, true)
	housekeepingForTest(t, p.url(opsRole))

	logger, logs := testLogger(t)
	var r runs
	startWorker(t, p.url(workerRole), &r, logger)
	app := startApplication(t, p.url(appRole), loadWorkflowCount, createOver)

	// the primary dies a third of the way through
	old := newPool(t, p.primary.URL("postgres"), 2)
	require.Eventually(t, func() bool {
		var done int
		err := old.QueryRow(ctx, `select count(*) from geneva.step_executions where outcome = 'success'`).Scan(&done)
		return err == nil && done >= loadWorkflowCount*len(stepNames)/3
	}, 2*time.Minute, 10*time.Millisecond)
	var before int
	require.NoError(t, old.QueryRow(ctx, `select count(*) from geneva.step_executions where outcome = 'success'`).Scan(&before))
	old.Close()
	killedAt := time.Now()
	require.NoError(t, p.primary.Kill())
	promotedAt := time.Now()
	require.NoError(t, p.standby.Promote(ctx))
	promoteTook := time.Since(promotedAt)

	// the new primary, seen directly
	newPrimary := newPool(t, p.standby.URL("postgres"), 4)
	var firstStep time.Time
	require.Eventually(t, func() bool {
		err := newPrimary.QueryRow(ctx, `select min(finished_at) from geneva.step_executions
			where outcome = 'success' and finished_at >= $1`, promotedAt).Scan(&firstStep)
		return err == nil && !firstStep.IsZero()
	}, time.Minute, 10*time.Millisecond, "a step recorded on the new primary")
	recovery := firstStep.Sub(promotedAt)
	t.Logf("failover: %d step successes before the kill; pg_ctl promote took %s; the first step recorded on the new primary %s after the promotion began (%s after the kill)",
		before, promoteTook.Round(time.Millisecond), recovery.Round(time.Millisecond), firstStep.Sub(killedAt).Round(time.Millisecond))
	require.Less(t, recovery, maxRecoveryAfterPromotion)

	// every workflow finishes
	select {
	case <-app.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the application did not create every workflow and send every event")
	}
	ids := app.workflowIDs()
	require.Len(t, ids, loadWorkflowCount)
	waitFinished(t, newPrimary, ids, 2*time.Minute)
	finishedAt := time.Now()

	checkHistory(t, newPrimary, ids, &r, true)
	checkJobs(t, newPrimary)
	checkLimits(t, newPrimary)
	checkHousekeepingSince(t, newPrimary, promotedAt)
	checkListener(t, newPrimary)
	t.Logf("after the failover: every workflow finished %s after the promotion; the application retried %d calls; the worker logged %d warnings and %d errors:\n%s",
		finishedAt.Sub(promotedAt).Round(time.Millisecond), app.retries.Load(), logs.warnings.Load(), logs.errors.Load(), logs)
}

// waitFinished waits until every workflow of ids is finished.
func waitFinished(t *testing.T, pool *pgxpool.Pool, ids []int64, within time.Duration) {
	t.Helper()
	ctx := context.Background()
	var finished int
	deadline := time.Now().Add(within)
	for ; time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		require.NoError(t, pool.QueryRow(ctx, `select count(*) from geneva.workflows where id = any($1) and state = 'finished'`, ids).Scan(&finished))
		if finished == len(ids) {
			return
		}
	}
	rows, err := pool.Query(ctx, `select w.id, w.workflow_type, w.state, e.step_name, e.state, e.outcome, e.scheduled_for, e.updated_at
		from geneva.workflows w left join geneva.step_executions e on e.workflow_id = w.id and e.state in ('scheduled', 'in_progress')
		where w.id = any($1) and w.state <> 'finished' order by w.id limit 20`, ids)
	require.NoError(t, err)
	for rows.Next() {
		values, err := rows.Values()
		require.NoError(t, err)
		t.Logf("unfinished: %v", values)
	}
	t.Fatalf("%d of %d workflows finished within %s", finished, len(ids), within)
}

// checkHistory asserts, per workflow and step, exactly one execution whose
// outcome is success, the others (if any) recovered by housekeeping, none
// in progress or scheduled; with exactOnce, that each step ran once (the
// worker's own count).
func checkHistory(t *testing.T, pool *pgxpool.Pool, ids []int64, r *runs, exactlyOnce bool) (recovered int) {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `select workflow_id, step_name,
			count(*) filter (where outcome = 'success'),
			count(*) filter (where outcome = 'recovered'),
			coalesce(array_agg(state || '/' || coalesce(outcome, '')) filter (where outcome is distinct from 'success' and outcome is distinct from 'recovered'), '{}')
		from geneva.step_executions where workflow_id = any($1)
		group by workflow_id, step_name`, ids)
	require.NoError(t, err)
	type stepRow struct {
		workflowID         int64
		step               string
		success, recovered int
		others             []string
	}
	steps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (s stepRow, err error) {
		err = row.Scan(&s.workflowID, &s.step, &s.success, &s.recovered, &s.others)
		return s, err
	})
	require.NoError(t, err)
	require.Len(t, steps, len(ids)*len(stepNames), "every workflow has an execution of each step")
	ranTwice := 0
	for _, s := range steps {
		require.Equal(t, 1, s.success, "workflow %d step %s: one success", s.workflowID, s.step)
		require.Empty(t, s.others, "workflow %d step %s: only recovered executions besides the success", s.workflowID, s.step)
		recovered += s.recovered
		if n := r.of(s.workflowID, s.step); n != 1 {
			ranTwice++
			if exactlyOnce {
				t.Errorf("workflow %d step %s ran %d times", s.workflowID, s.step, n)
			}
		}
	}
	t.Logf("history: %d steps, each with one success; %d executions recovered by housekeeping; %d steps ran more than once", len(steps), recovered, ranTwice)
	return recovered
}

// checkJobs asserts that River's jobs agree with the executions: a step job
// River has not finished names an execution that has ended (when River's
// rescuer retries it, the claim finds nothing to run).
func checkJobs(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `select j.id, j.state::text, e.id, e.state
		from public.river_job j left join geneva.step_executions e on e.id = (j.args ->> 'execution_id')::bigint
		where j.kind = 'geneva_step' and j.state::text <> 'completed'`)
	require.NoError(t, err)
	var open []string
	for rows.Next() {
		var jobID int64
		var jobState string
		var executionID *int64
		var executionState *string
		require.NoError(t, rows.Scan(&jobID, &jobState, &executionID, &executionState))
		require.NotNil(t, executionState, "job %d names no execution", jobID)
		require.NotContains(t, []string{"scheduled", "in_progress"}, *executionState,
			"job %d (%s) of execution %d, which has not ended", jobID, jobState, *executionID)
		open = append(open, fmt.Sprintf("job %d %s (execution %d %s)", jobID, jobState, *executionID, *executionState))
	}
	require.NoError(t, rows.Err())
	t.Logf("River: %d step jobs not completed, each of an ended execution: %v", len(open), open)
}

// checkLimits asserts that no slot of a limit is held or awaited once every
// workflow finished.
func checkLimits(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var slots int
	require.NoError(t, pool.QueryRow(context.Background(), `select count(*) from geneva.limit_slots`).Scan(&slots))
	require.Zero(t, slots, "limit slots held after every workflow finished")
}

// checkHousekeepingSince asserts that the workers' housekeeping ran a round
// on the new primary.
func checkHousekeepingSince(t *testing.T, pool *pgxpool.Pool, since time.Time) {
	t.Helper()
	require.Eventually(t, func() bool {
		var last time.Time
		err := pool.QueryRow(context.Background(), `select last_run_at from geneva.housekeeping_rounds`).Scan(&last)
		return err == nil && last.After(since)
	}, 10*time.Second, 50*time.Millisecond, "a housekeeping round on the new primary")
}

// checkListener asserts that River's listener listens on the new primary.
func checkListener(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	require.Eventually(t, func() bool {
		var n int
		err := pool.QueryRow(context.Background(), `select count(*) from pg_stat_activity
			where usename = $1 and (query ilike 'listen %' or query = '-- ping') and state = 'idle'`, workerRole).Scan(&n)
		return err == nil && n > 0
	}, 20*time.Second, 100*time.Millisecond, "River's listener on the new primary")
}
