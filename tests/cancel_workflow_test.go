package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCancelWorkflow(t *testing.T) {
	t.Parallel()

	t.Run("CancelsPausedWorkflowAndKeptExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		kept := b.active(t, id)
		b.call(t, "pause_workflow", id)

		b.setNow(t, t0.Add(time.Minute))
		require.Equal(t, "canceled", b.call(t, "cancel_workflow", id))

		got := b.execution(t, kept.ID)
		require.Equal(t, "canceled", got.State)
		require.Equal(t, "canceled_externally", deref(got.Outcome))
		require.Equal(t, t0.Add(time.Minute), deref(got.CanceledAt))
		wf := b.workflow(t, id)
		require.Equal(t, "canceled", wf.State)
		require.Nil(t, wf.PausedAt)
		require.Equal(t, t0.Add(time.Minute), deref(wf.CanceledAt))
	})

	t.Run("CancelsTheWaitingRiverJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		waiting := b.active(t, id) // b's job is scheduled in River

		b.call(t, "cancel_workflow", id)

		require.Equal(t, "cancelled", b.job(t, *waiting.JobID).State, "no worker runs it for nothing")
	})

	t.Run("CancelsReadyWorkflowAndFreesSlot", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		execution := b.active(t, id)

		require.Equal(t, "canceled", b.call(t, "cancel_workflow", id))

		got := b.execution(t, execution.ID)
		require.Equal(t, "canceled", got.State)
		require.Equal(t, "canceled_externally", deref(got.Outcome))
		require.Equal(t, t0, deref(got.FinishedAt))
		wf := b.workflow(t, id)
		require.Equal(t, "canceled", wf.State)
		require.Equal(t, t0, deref(wf.TransitionedAt))
		b.noActive(t, id)
		// its job, if River delivers it, changes nothing
		_, ok := b.startStep(t, execution.ID, nil)
		require.False(t, ok)
		require.Equal(t, got, b.execution(t, execution.ID))
		b.create(t, "ThreeSteps", "1")
	})

	t.Run("OfPerformingWorkflowWaitsForStepBoundary", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		require.Equal(t, "performing", b.call(t, "cancel_workflow", id))
		require.Equal(t, "performing", b.call(t, "cancel_workflow", id), "asking twice is harmless")
		_, err := b.tryCreate("ThreeSteps", "1")
		requireCode(t, err, "23505") // not canceled yet

		result := b.complete(t, started.ExecutionID, "success", nil)

		require.Equal(t, completed{Outcome: ptr("success"), WorkflowState: "canceled"}, result, "the step's own result is recorded")
		b.noActive(t, id)
		executions := b.executions(t, id)
		require.Len(t, executions, 2, "the next execution is created canceled")
		require.Equal(t, "b", executions[1].StepName)
		require.Equal(t, "canceled", executions[1].State)
		require.Equal(t, "canceled_externally", deref(executions[1].Outcome))
		require.Nil(t, executions[1].JobID, "no job for it")
		require.Zero(t, b.jobCount(t, executions[1].ID))
		workflow := b.workflow(t, id)
		require.Nil(t, workflow.RequestedAction)
		require.Equal(t, "b", deref(workflow.NextStepName))
	})

	t.Run("OfPerformingWorkflowReplacesRequestedPause", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.call(t, "pause_workflow", id)

		b.call(t, "cancel_workflow", id)
		result := b.complete(t, started.ExecutionID, "pause", nil)

		require.Equal(t, "canceled", result.WorkflowState)
	})

	t.Run("OfPerformingWorkflowOnItsLastStepCancelsIt", func(t *testing.T) {
		t.Parallel()
		for _, signal := range []string{"success", "finished"} {
			t.Run(signal, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.define(t, "One", `{"steps": [{"name": "only"}]}`)
				id := b.create(t, "One", "1")
				started := b.run(t, id)
				b.call(t, "cancel_workflow", id)

				result := b.complete(t, started.ExecutionID, signal, nil)

				require.Equal(t, completed{Outcome: ptr("success"), WorkflowState: "canceled"}, result,
					"the step's own result is recorded, then the requested cancel")
				b.noActive(t, id)
				workflow := b.workflow(t, id)
				require.NotNil(t, workflow.CanceledAt)
				require.Nil(t, workflow.FinishedAt)
			})
		}
	})

	t.Run("OfPerformingWorkflowOnItsLastStepLetsPauseFinish", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		id := b.create(t, "One", "1")
		started := b.run(t, id)
		b.call(t, "pause_workflow", id)

		result := b.complete(t, started.ExecutionID, "success", nil)

		require.Equal(t, "finished", result.WorkflowState, "a pause holds the next step; there is none")
	})

	t.Run("RaisesForUnknownWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.tryCall("cancel_workflow", 12345)
		requireCode(t, err, "P0002")
	})

	t.Run("RefusesFinishedAndCanceled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.define(t, "Empty", `{"steps": []}`)
		canceled := b.create(t, "ThreeSteps", "1")
		b.call(t, "cancel_workflow", canceled)
		finished := b.create(t, "Empty", "2")

		for _, id := range []int64{canceled, finished} {
			before := b.workflow(t, id)
			_, err := b.tryCall("cancel_workflow", id)
			requireCode(t, err, "55000")
			require.Equal(t, before, b.workflow(t, id))
		}
	})
}
