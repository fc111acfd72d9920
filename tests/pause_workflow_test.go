package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPauseWorkflow(t *testing.T) {
	t.Parallel()

	t.Run("KeepsScheduledExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		kept := b.active(t, id)

		b.setNow(t, t0.Add(time.Minute))
		require.Equal(t, "paused", b.call(t, "pause_workflow", id))

		wf := b.workflow(t, id)
		require.Equal(t, "paused", wf.State)
		require.Equal(t, t0.Add(time.Minute), deref(wf.PausedAt))
		require.Equal(t, t0.Add(time.Minute), deref(wf.TransitionedAt))
		require.Equal(t, kept, b.active(t, id), "same execution, same time")
	})

	t.Run("OfPerformingWorkflowWaitsForStepBoundary", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		require.Equal(t, "performing", b.call(t, "pause_workflow", id))
		require.Equal(t, "pause", deref(b.workflow(t, id).RequestedAction))
		require.Equal(t, "performing", b.call(t, "pause_workflow", id), "asking twice is harmless")

		result := b.complete(t, started.ExecutionID, "success", nil)

		require.Equal(t, completed{Outcome: ptr("success"), WorkflowState: "paused"}, result)
		wf := b.workflow(t, id)
		require.Nil(t, wf.RequestedAction)
		require.Nil(t, wf.CurrentStepName)
		require.Equal(t, "b", deref(wf.NextStepName))
		kept := b.active(t, id)
		require.Equal(t, "b", kept.StepName)
		require.Equal(t, t0.Add(hours(1)), kept.ScheduledFor)
		require.Nil(t, kept.JobID, "no job while paused")

		// resume enqueues it for its time
		require.Equal(t, "ready", b.call(t, "resume_workflow", id))
		kept = b.active(t, id)
		require.NotNil(t, kept.JobID)
		require.Equal(t, "scheduled", b.job(t, *kept.JobID).State)
	})

	t.Run("OfPerformingWorkflowKeepsReattempt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, `{"action": "reattempt", "wait": "1 minute"}`)
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)
		b.call(t, "pause_workflow", id)

		result := b.fail(t, started.ExecutionID, []string{"Boom"}, "boom")

		require.Equal(t, "reattempted_by_exception", deref(result.Outcome))
		require.Equal(t, "paused", result.WorkflowState)
		kept := b.active(t, id)
		require.Equal(t, "a", kept.StepName)
		require.Equal(t, t0.Add(time.Minute), kept.ScheduledFor)
	})

	t.Run("RaisesForUnknownWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.tryCall("pause_workflow", 12345)
		requireCode(t, err, "P0002")
		_, err = b.conn.Exec(b.ctx, "select geneva.pause_workflow(null)")
		requireCode(t, err, "22004")
	})

	t.Run("RefusesPausedFinishedCanceled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.define(t, "Empty", `{"steps": []}`)

		paused := b.create(t, "ThreeSteps", "1")
		b.call(t, "pause_workflow", paused)
		canceled := b.create(t, "ThreeSteps", "2")
		b.call(t, "cancel_workflow", canceled)
		finished := b.create(t, "Empty", "3")

		for _, id := range []int64{paused, canceled, finished} {
			before := b.workflow(t, id)
			_, err := b.tryCall("pause_workflow", id)
			requireCode(t, err, "55000")
			require.Equal(t, before, b.workflow(t, id))
		}
	})

	t.Run("RefusesPerformingWithCancelRequested", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.run(t, id)
		b.call(t, "cancel_workflow", id)

		_, err := b.tryCall("pause_workflow", id)

		requireCode(t, err, "55000")
		require.Equal(t, "cancel", deref(b.workflow(t, id).RequestedAction))
	})
}
