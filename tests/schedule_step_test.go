package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scheduleStep calls geneva.schedule_step for a named step and returns the
// state it reports (b.call runs it for the step that would run next).
func (b *testBundle) scheduleStep(t *testing.T, workflowID int64, stepName string) string {
	t.Helper()
	var state string
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select (geneva.schedule_step($1, $2)).state", workflowID, stepName).Scan(&state))
	return state
}

func TestScheduleStep(t *testing.T) {
	t.Parallel()

	// "Run it now instead of waiting": the waiting execution ends as the
	// operator's cancel, and the step runs again now, as one more attempt.
	t.Run("FromReadyReplacesScheduledExecutionWithOneDueNow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		waiting := b.active(t, id) // b, due in an hour
		b.setNow(t, t0.Add(10*time.Minute))

		require.Equal(t, "ready", b.call(t, "schedule_step", id))

		replaced := b.execution(t, waiting.ID)
		require.Equal(t, "canceled", replaced.State)
		require.Equal(t, "canceled_externally", deref(replaced.Outcome))
		require.Equal(t, t0.Add(10*time.Minute), deref(replaced.CanceledAt))
		require.Equal(t, "cancelled", b.job(t, *waiting.JobID).State, "no worker runs it for nothing")
		now := b.active(t, id)
		require.NotEqual(t, waiting.ID, now.ID)
		require.Equal(t, "b", now.StepName)
		require.Equal(t, t0.Add(10*time.Minute), now.ScheduledFor)
		require.Equal(t, 2, b.hkAttempt(t, now.ID), "one more attempt of b")
		require.Equal(t, "available", b.job(t, *now.JobID).State)
		require.Equal(t, "b", deref(b.workflow(t, id).NextStepName))
		started, ok := b.startStep(t, now.ID, nil)
		require.True(t, ok)
		require.Equal(t, "b", started.StepName)
	})

	t.Run("RunsTheNamedStepInstead", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		waiting := b.active(t, id)

		require.Equal(t, "ready", b.scheduleStep(t, id, "c"))

		require.Equal(t, "canceled", b.execution(t, waiting.ID).State)
		now := b.active(t, id)
		require.Equal(t, "c", now.StepName)
		require.Equal(t, t0, now.ScheduledFor)
		require.Equal(t, 1, b.hkAttempt(t, now.ID), "c's first attempt")
		require.Equal(t, "c", deref(b.workflow(t, id).NextStepName))

		// and the workflow goes on from there: c is the last step
		got := b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		require.Equal(t, "finished", got.WorkflowState)
	})

	t.Run("RunsAnEndedStepAgain", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		first := b.run(t, id)
		b.complete(t, first.ExecutionID, "success", nil)

		b.scheduleStep(t, id, "a")

		again := b.active(t, id)
		require.Equal(t, "a", again.StepName)
		require.Equal(t, 2, b.hkAttempt(t, again.ID))
		require.Equal(t, "completed", b.execution(t, first.ExecutionID).State, "history stays")
	})

	t.Run("FromPausedMakesReady", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		kept := b.active(t, id)
		b.call(t, "pause_workflow", id)

		b.setNow(t, t0.Add(time.Minute))
		require.Equal(t, "ready", b.call(t, "schedule_step", id))

		wf := b.workflow(t, id)
		require.Nil(t, wf.PausedAt)
		require.Nil(t, wf.TransitionedAt)
		require.Equal(t, "canceled_externally", deref(b.execution(t, kept.ID).Outcome), "the kept execution is replaced")
		now := b.active(t, id)
		require.Equal(t, "a", now.StepName)
		require.Equal(t, t0.Add(time.Minute), now.ScheduledFor)
	})

	// Paused by an exception, no execution is kept: the failed step runs
	// again (where skip_step would go on with the next).
	t.Run("FromPausedOnErrorRunsTheFailedStepAgain", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		failedExecution := b.run(t, id)
		b.fail(t, failedExecution.ExecutionID, []string{"Boom"}, "boom")
		require.Equal(t, "paused", b.workflow(t, id).State)
		b.noActive(t, id)

		require.Equal(t, "ready", b.call(t, "schedule_step", id))

		require.Equal(t, "paused_by_exception", deref(b.execution(t, failedExecution.ExecutionID).Outcome),
			"the failed execution stays as it was")
		again := b.active(t, id)
		require.Equal(t, "a", again.StepName)
		require.Equal(t, 2, b.hkAttempt(t, again.ID))
		require.Len(t, b.executions(t, id), 2)
	})

	t.Run("RaisesForUnknownStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		before, history := b.workflow(t, id), b.executions(t, id)

		for _, step := range []string{"d", "A", ""} {
			_, err := b.conn.Exec(b.ctx, "select geneva.schedule_step($1, $2)", id, step)
			requireCode(t, err, "22023")
		}

		require.Equal(t, before, b.workflow(t, id))
		require.Equal(t, history, b.executions(t, id))
	})

	t.Run("RaisesForUnknownWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.tryCall("schedule_step", 12345)
		requireCode(t, err, "P0002")
		_, err = b.conn.Exec(b.ctx, "select geneva.schedule_step(null)")
		requireCode(t, err, "22004")
	})

	t.Run("RefusesPerformingFinishedCanceled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.define(t, "Empty", `{"steps": []}`)
		performing := b.create(t, "ThreeSteps", "1")
		b.run(t, performing)
		canceled := b.create(t, "ThreeSteps", "2")
		b.call(t, "cancel_workflow", canceled)
		finished := b.create(t, "Empty", "3")

		for _, id := range []int64{performing, canceled, finished} {
			before, history := b.workflow(t, id), b.executions(t, id)
			_, err := b.tryCall("schedule_step", id)
			pgErr := requireCode(t, err, "55000")
			require.Equal(t, "workflows", pgErr.TableName)
			_, err = b.conn.Exec(b.ctx, "select geneva.schedule_step($1, 'a')", id)
			requireCode(t, err, "55000")
			require.Equal(t, before, b.workflow(t, id))
			require.Equal(t, history, b.executions(t, id))
		}
	})
}
