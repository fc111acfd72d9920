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
	r := newRuns()
	startWorker(t, p.url(workerRole), r, logger)
	app := startApplication(t, p.url(appRole), loadWorkflowCount, createOver)

	// the primary dies a third of the way through; meanwhile, the
	// dashboard and the metrics read from the standby
	old := newPool(t, p.primary.URL("postgres"), 2)
	require.Eventually(t, func() bool {
		var done int
		err := old.QueryRow(ctx, `select count(*) from geneva.step_executions where outcome = 'success'`).Scan(&done)
		return err == nil && done >= loadWorkflowCount*len(stepNames)/6
	}, 2*time.Minute, 10*time.Millisecond)
	checkPagesOnStandby(t, p)
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

	checkHistory(t, newPrimary, ids, r, true)
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
	rows, err := pool.Query(ctx, `select workflow_id, (select hero_id from geneva.workflows w where w.id = workflow_id), step_name,
			count(*) filter (where outcome = 'success'),
			count(*) filter (where outcome = 'recovered'),
			coalesce(array_agg(state || '/' || coalesce(outcome, '')) filter (where outcome is distinct from 'success' and outcome is distinct from 'recovered'), '{}')
		from geneva.step_executions where workflow_id = any($1)
		group by workflow_id, step_name`, ids)
	require.NoError(t, err)
	type stepRow struct {
		workflowID         int64
		heroID, step       string
		success, recovered int
		others             []string
	}
	steps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (s stepRow, err error) {
		err = row.Scan(&s.workflowID, &s.heroID, &s.step, &s.success, &s.recovered, &s.others)
		return s, err
	})
	require.NoError(t, err)
	require.Len(t, steps, len(ids)*len(stepNames), "every workflow has an execution of each step")
	ranTwice := 0
	for _, s := range steps {
		require.Equal(t, 1, s.success, "workflow %d step %s: one success", s.workflowID, s.step)
		require.Empty(t, s.others, "workflow %d step %s: only recovered executions besides the success", s.workflowID, s.step)
		recovered += s.recovered
		n := r.of(s.workflowID, s.heroID, s.step)
		require.NotZero(t, n, "workflow %d step %s: a success recorded, and the step never ran", s.workflowID, s.step)
		if n != 1 {
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
// workflow finished, and that housekeeping collects the free slots' rows
// (a free slot's row stays until a round finds its key idle).
func checkLimits(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	slots := func(condition string) []string {
		rows, err := pool.Query(ctx, `select format('%s slot %s: workflow %s', limit_key, slot, coalesce(workflow_id::text, 'none'))
			from geneva.limit_slots where `+condition+` order by limit_key, slot`)
		require.NoError(t, err)
		held, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return held
	}
	require.Empty(t, slots(`workflow_id is not null`), "limit slots held after every workflow finished")
	var waiting int
	require.NoError(t, pool.QueryRow(ctx, `select count(*) from geneva.step_executions where limit_wait_key is not null`).Scan(&waiting))
	require.Zero(t, waiting, "executions waiting for a limit after every workflow finished")
	require.Eventually(t, func() bool { return len(slots(`true`)) == 0 }, 20*time.Second, 100*time.Millisecond,
		"housekeeping collects the free slots' rows")
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

// TestAsynchronousFailover: with an asynchronous standby, what the primary
// committed that the standby had not received when the primary died is
// lost: the test cuts the standby off, lets the primary work alone for a
// second, kills it and promotes the standby. Lost are workflows created
// (their creates answered), events sent and steps' successes recorded in
// that second; and the new primary gives the lost rows' ids again (its
// sequences go on from what the standby received), so that an id the
// application kept can name another workflow. Housekeeping heals the steps:
// an execution the new primary still has in progress (its success lost) is
// recovered and its step runs again, as does a step whose claim was lost
// (its job runs again); every surviving workflow finishes, each step with
// one success. The lost workflows and events are the application's to
// create and send again.
func TestAsynchronousFailover(t *testing.T) {
	skipUnlessAsked(t)
	ctx := context.Background()
	p := startPair(t, false)
	housekeepingForTest(t, p.url(opsRole))

	logger, logs := testLogger(t)
	r := newRuns()
	startWorker(t, p.url(workerRole), r, logger)
	const workflows = 600
	app := startApplication(t, p.url(appRole), workflows, 6*time.Second)

	old := newPool(t, p.primary.URL("postgres"), 2)
	require.Eventually(t, func() bool {
		var done int
		err := old.QueryRow(ctx, `select count(*) from geneva.step_executions where outcome = 'success'`).Scan(&done)
		return err == nil && done >= workflows*len(stepNames)/4
	}, 2*time.Minute, 10*time.Millisecond)

	// A slow step starts, and the standby has its claim.
	standby := newPool(t, p.standby.URL("postgres"), 4)
	slow, err := app.client.CreateWorkflow(ctx, slowType, "Load", "slow", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		var state string
		err := standby.QueryRow(ctx, `select state from geneva.step_executions where workflow_id = $1`, slow).Scan(&state)
		return err == nil && state == "in_progress"
	}, 30*time.Second, 10*time.Millisecond, "the slow step started")

	// The standby is cut off from the primary's WAL (as by a network
	// partition, or a standby that fell behind), and the primary works on
	// alone for a second (the slow step's success with it).
	require.NoError(t, p.standby.Reconfigure(ctx, map[string]string{"primary_conninfo": ""}))
	require.Eventually(t, func() bool {
		var receivers int
		err := standby.QueryRow(ctx, `select count(*) from pg_stat_wal_receiver`).Scan(&receivers)
		return err == nil && receivers == 0
	}, 30*time.Second, 10*time.Millisecond, "the standby stopped receiving")
	cutAt := time.Now()
	close(r.releaseSlow) // its success, recorded now, only the primary has
	time.Sleep(time.Second)

	// What the primary committed, as it saw it just before it died.
	successes := executionsWith(t, old, `outcome = 'success'`)
	var slowSucceeded bool
	require.NoError(t, old.QueryRow(ctx, `select exists (select from geneva.step_executions where workflow_id = $1 and outcome = 'success')`, slow).Scan(&slowSucceeded))
	require.True(t, slowSucceeded, "the slow step's success recorded on the primary")
	oldWorkflows := workflowHeroes(t, old)
	var events int
	require.NoError(t, old.QueryRow(ctx, `select count(*) from geneva.events`).Scan(&events))
	old.Close()
	require.NoError(t, p.primary.Kill())
	promotedAt := time.Now()
	require.NoError(t, p.standby.Promote(ctx))

	// What the new primary never saw (compared by more than ids: after the
	// promotion, the new primary gives lost rows' ids again).
	newPrimary := standby
	survivors := workflowHeroes(t, newPrimary)
	lostWorkflows := 0
	for id, hero := range oldWorkflows {
		if survivors[id] != hero {
			lostWorkflows++
		}
	}
	kept := executionsWith(t, newPrimary, `outcome = 'success'`)
	var lostSuccesses []execution
	for id, e := range successes {
		if kept[id] != e && survivors[e.workflowID] == oldWorkflows[e.workflowID] {
			lostSuccesses = append(lostSuccesses, e)
		}
	}
	var keptEvents int
	require.NoError(t, newPrimary.QueryRow(ctx, `select count(*) from geneva.events`).Scan(&keptEvents))
	t.Logf("lost with the primary (committed there in the last %s, never received by the standby): %d of %d workflows created, %d of %d events sent, and %d step successes of surviving workflows (of %d)",
		time.Since(cutAt).Round(time.Millisecond), lostWorkflows, len(oldWorkflows), events-keptEvents, events, len(lostSuccesses), len(successes))
	require.NotEmpty(t, lostSuccesses, "the primary recorded steps the standby never received")
	require.Positive(t, lostWorkflows, "the primary created workflows the standby never received")

	// The application goes on (its creates of the lost workflows were
	// answered: it does not create them again); then, as an application
	// reconciling after an asynchronous failover would, it sends the event
	// again to each workflow that still awaits one it sent.
	select {
	case <-app.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the application did not create every workflow and send every event")
	}
	var (
		alive         []int64 // the application's workflows that exist
		gone, renamed int     // its ids that name no workflow, or another one
	)
	heroes := workflowHeroes(t, newPrimary)
	for hero, id := range app.workflowsByHero() {
		switch heroes[id] {
		case hero:
			alive = append(alive, id)
		case "":
			gone++
		default:
			renamed++
		}
	}
	t.Logf("the application's ids: %d name a workflow that is gone, %d name another workflow (created after the promotion with a lost workflow's id), %d name theirs",
		gone, renamed, len(alive))
	resent := 0
	require.Eventually(t, func() bool {
		rows, err := newPrimary.Query(ctx, `select workflow_id from geneva.awaiting_events where event = $1`, goEvent)
		require.NoError(t, err)
		awaiting, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		for _, id := range awaiting {
			if app.sentTo(id) {
				app.send(ctx, id)
				resent++
			}
		}
		var unfinished int
		require.NoError(t, newPrimary.QueryRow(ctx, `select count(*) from geneva.workflows where id = any($1) and state <> 'finished'`, append(alive, slow)).Scan(&unfinished))
		return unfinished == 0
	}, 2*time.Minute, 500*time.Millisecond, "every surviving workflow finishes")
	t.Logf("the application sent %d lost events again; every surviving workflow (%d) finished %s after the promotion",
		resent, len(alive), time.Since(promotedAt).Round(time.Millisecond))

	// Housekeeping healed the lost successes: each such step ran again, and
	// has one success now.
	recovered := checkHistory(t, newPrimary, alive, r, false)
	for _, e := range lostSuccesses {
		require.GreaterOrEqual(t, r.of(e.workflowID, oldWorkflows[e.workflowID], e.step), int32(2), "workflow %d step %s, whose success was lost, ran again", e.workflowID, e.step)
	}
	require.Positive(t, recovered, "housekeeping recovered executions the new primary had in progress")
	rows, err := newPrimary.Query(ctx, `select outcome from geneva.step_executions where workflow_id = $1 order by id`, slow)
	require.NoError(t, err)
	slowOutcomes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"recovered", "success"}, slowOutcomes, "the slow step, its success lost, was recovered by housekeeping and ran again")
	require.EqualValues(t, 2, r.of(slow, "slow", "a"))
	checkJobs(t, newPrimary)
	checkLimits(t, newPrimary)
	checkHousekeepingSince(t, newPrimary, promotedAt)
	checkListener(t, newPrimary)
	t.Logf("the worker logged %d warnings and %d errors:\n%s", logs.warnings.Load(), logs.errors.Load(), logs)
}

// execution is a step execution, by id.
type execution struct {
	workflowID int64
	step       string
}

// workflowHeroes reads every workflow's hero id, by workflow id.
func workflowHeroes(t *testing.T, pool *pgxpool.Pool) map[int64]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `select id, hero_id from geneva.workflows`)
	require.NoError(t, err)
	heroes := map[int64]string{}
	for rows.Next() {
		var id int64
		var hero string
		require.NoError(t, rows.Scan(&id, &hero))
		heroes[id] = hero
	}
	require.NoError(t, rows.Err())
	return heroes
}

// executionsWith reads the executions that match a condition.
func executionsWith(t *testing.T, pool *pgxpool.Pool, condition string) map[int64]execution {
	t.Helper()
	rows, err := pool.Query(context.Background(), `select id, workflow_id, step_name from geneva.step_executions where `+condition)
	require.NoError(t, err)
	executions := map[int64]execution{}
	for rows.Next() {
		var id int64
		var e execution
		require.NoError(t, rows.Scan(&id, &e.workflowID, &e.step))
		executions[id] = e
	}
	require.NoError(t, rows.Err())
	return executions
}
