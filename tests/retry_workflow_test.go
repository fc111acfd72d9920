package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// retry calls retry_workflow and returns the new workflow's id.
func (b *testBundle) retry(t *testing.T, id int64, fromStep *string) int64 {
	t.Helper()
	var newID int64
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.retry_workflow($1, $2)", id, fromStep).Scan(&newID))
	return newID
}

func (b *testBundle) retriedFrom(t *testing.T, id int64) *int64 {
	t.Helper()
	var from *int64
	require.NoError(t, b.conn.QueryRow(b.ctx, "select retried_from from geneva.workflows where id = $1", id).Scan(&from))
	return from
}

// pausedOnB returns a ThreeSteps workflow that ran a, then failed in b and
// paused (the default policy).
func (b *testBundle) pausedOnB(t *testing.T, heroID string) int64 {
	t.Helper()
	id := b.create(t, "ThreeSteps", heroID)
	b.complete(t, b.run(t, id).ExecutionID, "success", nil)
	b.setNow(t, t0.Add(hours(1)))
	b.fail(t, b.run(t, id).ExecutionID, []string{"*errors.errorString"}, "boom")
	require.Equal(t, "paused", b.workflow(t, id).State)
	return id
}

func TestRetryWorkflow(t *testing.T) {
	t.Parallel()

	t.Run("FromPausedByErrorCancelsTheOriginalAndRerunsTheFailedStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.pausedOnB(t, "1")
		history := b.executions(t, id)

		b.setNow(t, t0.Add(hours(2)))
		newID := b.retry(t, id, nil)

		original := b.workflow(t, id)
		require.Equal(t, "canceled", original.State, "a paused original is canceled")
		require.Equal(t, history, b.executions(t, id), "the original's history stays (it kept no execution)")

		retried := b.workflow(t, newID)
		require.Equal(t, "ready", retried.State)
		require.Equal(t, "b", deref(retried.NextStepName))
		require.Equal(t, &id, b.retriedFrom(t, newID))
		require.Nil(t, b.retriedFrom(t, id))
		runs := b.executions(t, newID)
		require.Len(t, runs, 1, "the new run's history starts at the step")
		require.Equal(t, "b", runs[0].StepName)
		require.Equal(t, t0.Add(hours(2)), runs[0].ScheduledFor, "now, not after the step's wait")
		require.NotNil(t, runs[0].JobID)

		// it runs on to the end
		b.complete(t, b.run(t, newID).ExecutionID, "success", nil)
		b.complete(t, b.run(t, newID).ExecutionID, "success", nil)
		require.Equal(t, "finished", b.workflow(t, newID).State)
	})

	t.Run("FromPausedWithAKeptExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		kept := b.active(t, id)
		b.call(t, "pause_workflow", id)

		newID := b.retry(t, id, nil)
		require.Equal(t, "canceled", b.workflow(t, id).State)
		ended := b.execution(t, kept.ID)
		require.Equal(t, "canceled", ended.State)
		require.Equal(t, "canceled_externally", deref(ended.Outcome))
		require.Equal(t, "a", b.active(t, newID).StepName)
	})

	t.Run("FromANamedStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.pausedOnB(t, "1")
		newID := b.retry(t, id, ptr("c"))
		require.Equal(t, "c", b.active(t, newID).StepName)
		require.Equal(t, "c", deref(b.workflow(t, newID).NextStepName))
	})

	t.Run("FromFinishedStartsOverAndLeavesTheOriginal", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		b.setNow(t, t0.Add(hours(1)))
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		before := b.workflow(t, id)
		require.Equal(t, "finished", before.State)

		newID := b.retry(t, id, nil)
		require.Equal(t, before, b.workflow(t, id), "an ended original is untouched")
		require.Equal(t, "a", b.active(t, newID).StepName)
	})

	t.Run("FromCanceled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.pausedOnB(t, "1")
		b.call(t, "cancel_workflow", id)
		before := b.workflow(t, id)
		newID := b.retry(t, id, nil)
		require.Equal(t, before, b.workflow(t, id))
		require.Equal(t, "b", b.active(t, newID).StepName, "the step that would have run next")

		// and a retry of the retry keeps the lineage
		b.call(t, "pause_workflow", newID)
		third := b.retry(t, newID, nil)
		require.Equal(t, &newID, b.retriedFrom(t, third))
	})

	t.Run("RefusesReadyAndPerforming", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		_, err := b.conn.Exec(b.ctx, "select geneva.retry_workflow($1)", id)
		requireCode(t, err, "55000")
		b.run(t, id)
		_, err = b.conn.Exec(b.ctx, "select geneva.retry_workflow($1)", id)
		requireCode(t, err, "55000")
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows").Scan(&n))
		require.Equal(t, 1, n, "nothing written")
	})

	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.pausedOnB(t, "1")
		_, err := b.conn.Exec(b.ctx, "select geneva.retry_workflow($1, 'nope')", id)
		requireCode(t, err, "22023")
		require.Equal(t, "paused", b.workflow(t, id).State, "nothing half-written")
		_, err = b.conn.Exec(b.ctx, "select geneva.retry_workflow(null)")
		requireCode(t, err, "22004")
		_, err = b.conn.Exec(b.ctx, "select geneva.retry_workflow(424242)")
		requireCode(t, err, "P0002")
	})

	t.Run("RefusesWhenTheHeroHasAnotherOngoing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.pausedOnB(t, "1")
		b.call(t, "cancel_workflow", id)
		other := b.create(t, "ThreeSteps", "1")
		_, err := b.conn.Exec(b.ctx, "select geneva.retry_workflow($1)", id)
		pgErr := requireCode(t, err, "23505")
		require.Equal(t, "workflows_one_ongoing_per_hero", pgErr.ConstraintName)
		require.Equal(t, "ready", b.workflow(t, other).State)
	})

	t.Run("KeepsGroupAndHero", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		var id int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('ThreeSteps', 'User', '7', p_allow_multiple => true, p_group => 'acme')").Scan(&id))
		b.call(t, "pause_workflow", id)
		newID := b.retry(t, id, nil)
		var same bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			select (n.workflow_type, n.hero_type, n.hero_id, n.group_name, n.allow_multiple)
			  = (o.workflow_type, o.hero_type, o.hero_id, o.group_name, o.allow_multiple)
			from geneva.workflows n, geneva.workflows o where n.id = $1 and o.id = $2`, newID, id).Scan(&same))
		require.True(t, same)
	})
}
