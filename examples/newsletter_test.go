package examples_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/examples"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
)

// The newsletter goes to 100,000 subscribers through real workers: budgets
// hand the step over to successors, an operator pauses and resumes it
// midway, and its worker is restarted; every subscriber gets it exactly once.
// (The budget is shorter than the example's default and each batch takes a
// little while, so that all of it happens within a second or two.)
func TestNewsletter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	client := goclient.New(pool)
	_, err := pool.Exec(ctx, examples.NewsletterSchema+`
		insert into newsletter_subscribers select g, 'subscriber' || g || '@example.com' from generate_series(1, 100000) g`)
	require.NoError(t, err)

	newsletter := examples.Newsletter(pool, &examples.NewsletterOptions{MaxRuntime: 150 * time.Millisecond, SendDelay: 2 * time.Millisecond})
	startWorker := func() *worker.Worker {
		w, err := worker.New(pool, &worker.Config{
			Workflows: []*worker.Workflow{newsletter},
			River:     &river.Config{FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond},
		})
		require.NoError(t, err)
		require.NoError(t, w.Start(ctx))
		return w
	}
	stopWorker := func(w *worker.Worker) {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(stopCtx))
	}
	delivered := func() (total, distinct int) {
		require.NoError(t, pool.QueryRow(ctx,
			"select count(*), count(distinct subscriber_id) from newsletter_deliveries").Scan(&total, &distinct))
		return total, distinct
	}
	waitFor := func(what string, cond func() bool) {
		require.Eventually(t, cond, 30*time.Second, 5*time.Millisecond, what)
	}
	state := func(id int64) goclient.WorkflowState {
		workflow, err := client.GetWorkflow(ctx, id)
		require.NoError(t, err)
		return workflow.State
	}
	// the kept or scheduled execution's cursor must say exactly how far the
	// deliveries got
	requireCursorAtLastDelivery := func(id int64) {
		t.Helper()
		var cursor, last int64
		require.NoError(t, pool.QueryRow(ctx, `select e.cursor::bigint from geneva.step_executions e
			where e.workflow_id = $1 and e.state = 'scheduled'`, id).Scan(&cursor))
		require.NoError(t, pool.QueryRow(ctx, "select max(subscriber_id) from newsletter_deliveries").Scan(&last))
		require.Equal(t, last, cursor)
	}

	first := startWorker()
	id, err := client.CreateWorkflow(ctx, "Newsletter", "Campaign", "spring-sale", nil)
	require.NoError(t, err)

	// an operator pauses it midway, looks, and resumes it
	waitFor("a quarter delivered", func() bool { total, _ := delivered(); return total >= 25000 })
	_, err = client.PauseWorkflow(ctx, id)
	require.NoError(t, err)
	waitFor("paused", func() bool { return state(id) == goclient.StatePaused })
	atPause, _ := delivered()
	require.Less(t, atPause, 100000, "paused midway")
	requireCursorAtLastDelivery(id)
	time.Sleep(50 * time.Millisecond)
	stillAtPause, _ := delivered()
	require.Equal(t, atPause, stillAtPause, "nothing is sent while paused")
	_, err = client.ResumeWorkflow(ctx, id)
	require.NoError(t, err)

	// a deploy restarts the worker
	waitFor("more delivered", func() bool { total, _ := delivered(); return total >= atPause+20000 })
	stopWorker(first)
	atRestart, _ := delivered()
	require.Less(t, atRestart, 100000, "restarted midway")
	require.Equal(t, goclient.StateReady, state(id))
	requireCursorAtLastDelivery(id)
	second := startWorker()
	defer stopWorker(second)

	waitFor("finished", func() bool { return state(id) == goclient.StateFinished })
	total, distinct := delivered()
	require.Equal(t, 100000, total, "no subscriber got it twice")
	require.Equal(t, 100000, distinct, "every subscriber got it")

	// the executions of "send" form one chain, each continuing the one before
	// from where it got to
	timeline, err := client.Timeline(ctx, id)
	require.NoError(t, err)
	var sends []*goclient.TimelineEntry
	for _, e := range timeline {
		if e.StepName == "send" {
			sends = append(sends, e)
		}
	}
	require.GreaterOrEqual(t, len(sends), 4, "budgets, the pause and the restart each hand over")
	for i, e := range sends[1:] {
		require.Equal(t, sends[i].ExecutionID, *e.ContinuesFromID)
		require.Equal(t, goclient.OutcomeSuspended, *sends[i].Outcome)
	}
	require.Equal(t, goclient.OutcomeSuccess, *sends[len(sends)-1].Outcome)
	require.JSONEq(t, "100000", string(sends[len(sends)-1].Cursor))
}
