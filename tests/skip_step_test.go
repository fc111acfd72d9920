package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSkipStep(t *testing.T) {
	t.Parallel()

	t.Run("FromPausedOnErrorSchedulesStepAfterFailedOne", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		failedExecution := b.run(t, id)
		b.fail(t, failedExecution.ExecutionID, []string{"Boom"}, "boom")

		require.Equal(t, "ready", b.call(t, "skip_step", id))

		require.Equal(t, "paused_by_exception", deref(b.execution(t, failedExecution.ExecutionID).Outcome), "the failed execution stays as it was")
		next := b.active(t, id)
		require.Equal(t, "b", next.StepName)
		require.Equal(t, t0.Add(hours(1)), next.ScheduledFor)
		wf := b.workflow(t, id)
		require.Nil(t, wf.PausedAt)
		require.Nil(t, wf.TransitionedAt)
	})

	t.Run("FromPausedSkipsKeptExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		kept := b.active(t, id)
		b.call(t, "pause_workflow", id)

		require.Equal(t, "ready", b.call(t, "skip_step", id))

		require.Equal(t, "skipped_externally", deref(b.execution(t, kept.ID).Outcome))
		require.Equal(t, "b", b.active(t, id).StepName)
	})

	t.Run("FromReadySkipsScheduledExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		a := b.active(t, id)

		require.Equal(t, "ready", b.call(t, "skip_step", id))

		got := b.execution(t, a.ID)
		require.Equal(t, "skipped", got.State)
		require.Equal(t, "skipped_externally", deref(got.Outcome))
		require.Equal(t, t0, deref(got.SkippedAt))
		next := b.active(t, id)
		require.Equal(t, "b", next.StepName)
		require.Equal(t, t0.Add(hours(1)), next.ScheduledFor, "the next step waits its own wait")
		require.Equal(t, "b", deref(b.workflow(t, id).NextStepName))
	})

	t.Run("OfLastStepFinishes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		id := b.create(t, "One", "1")

		require.Equal(t, "finished", b.call(t, "skip_step", id))
		b.noActive(t, id)
	})

	t.Run("RaisesForUnknownWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.tryCall("skip_step", 12345)
		requireCode(t, err, "P0002")
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
			before := b.workflow(t, id)
			_, err := b.tryCall("skip_step", id)
			requireCode(t, err, "55000")
			require.Equal(t, before, b.workflow(t, id))
		}
	})
}
