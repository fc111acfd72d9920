package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestResumeWorkflow(t *testing.T) {
	t.Parallel()

	t.Run("EnqueuesOverdueExecutionNow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		kept := b.active(t, id) // b, due at t0 + 1h
		b.setNow(t, t0.Add(time.Minute))
		b.call(t, "pause_workflow", id)
		// its job ran while the workflow was paused, and did nothing
		b.setNow(t, t0.Add(hours(1)))
		_, ok := b.startStep(t, kept.ID, nil)
		require.False(t, ok)
		_, err := b.conn.Exec(b.ctx, "update public.river_job set state = 'completed', finalized_at = now() where id = $1", *kept.JobID)
		require.NoError(t, err)

		b.setNow(t, t0.Add(hours(3)))
		require.Equal(t, "ready", b.call(t, "resume_workflow", id))

		wf := b.workflow(t, id)
		require.Nil(t, wf.PausedAt)
		require.Nil(t, wf.TransitionedAt)
		resumed := b.active(t, id)
		require.Equal(t, kept.ID, resumed.ID, "the kept execution is reused")
		require.Equal(t, t0.Add(hours(1)), resumed.ScheduledFor, "its time is kept")
		require.NotEqual(t, *kept.JobID, *resumed.JobID)
		job := b.job(t, *resumed.JobID)
		require.Equal(t, "available", job.State, "overdue: enqueued now")
		_, ok = b.startStep(t, resumed.ID, nil)
		require.True(t, ok)
	})

	t.Run("EnqueuesFutureExecutionAtItsTime", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		kept := b.active(t, id)
		b.call(t, "pause_workflow", id)
		// its job was removed from River meanwhile
		_, err := b.conn.Exec(b.ctx, "delete from public.river_job where id = $1", *kept.JobID)
		require.NoError(t, err)

		b.setNow(t, t0.Add(20*time.Minute))
		b.call(t, "resume_workflow", id)

		resumed := b.active(t, id)
		require.Equal(t, kept.ID, resumed.ID)
		job := b.job(t, *resumed.JobID)
		require.Equal(t, "scheduled", job.State)
		require.WithinDuration(t, b.dbNow(t).Add(40*time.Minute), job.ScheduledAt, time.Minute, "due after the remaining 40 minutes")
	})

	t.Run("LeavesWaitingJobAlone", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		kept := b.active(t, id)
		b.call(t, "pause_workflow", id)

		b.call(t, "resume_workflow", id)

		require.Equal(t, kept.JobID, b.active(t, id).JobID)
		require.Equal(t, 1, b.jobCount(t, kept.ID), "its job still waits in River")
	})

	t.Run("RaisesForUnknownWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.tryCall("resume_workflow", 12345)
		requireCode(t, err, "P0002")
	})

	t.Run("RefusesWorkflowNotPaused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.define(t, "Empty", `{"steps": []}`)
		ready := b.create(t, "ThreeSteps", "1")
		performing := b.create(t, "ThreeSteps", "2")
		b.run(t, performing)
		canceled := b.create(t, "ThreeSteps", "3")
		b.call(t, "cancel_workflow", canceled)
		finished := b.create(t, "Empty", "4")

		for _, id := range []int64{ready, performing, canceled, finished} {
			before := b.workflow(t, id)
			_, err := b.tryCall("resume_workflow", id)
			requireCode(t, err, "55000")
			require.Equal(t, before, b.workflow(t, id))
		}
	})

	t.Run("WithdrawsPauseRequestedOfPerformingWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.call(t, "pause_workflow", id)

		require.Equal(t, "performing", b.call(t, "resume_workflow", id))

		wf := b.workflow(t, id)
		require.Nil(t, wf.RequestedAction, "the request is withdrawn")
		require.Equal(t, "a", deref(wf.CurrentStepName), "the step still runs")
		require.Equal(t, "ready", b.complete(t, started.ExecutionID, "success", nil).WorkflowState,
			"the step's end moves on as if no pause had been requested")
		require.Equal(t, "b", b.active(t, id).StepName)
	})

	t.Run("RefusesPerformingWithoutPauseRequested", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		running := b.create(t, "ThreeSteps", "1")
		b.run(t, running)
		cancelRequested := b.create(t, "ThreeSteps", "2")
		b.run(t, cancelRequested)
		b.call(t, "cancel_workflow", cancelRequested)

		for _, id := range []int64{running, cancelRequested} {
			before := b.workflow(t, id)
			_, err := b.tryCall("resume_workflow", id)
			requireCode(t, err, "55000")
			require.Equal(t, before, b.workflow(t, id))
		}
	})
}
