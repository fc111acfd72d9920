package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCompleteStep(t *testing.T) {
	t.Parallel()

	t.Run("CancelEndsWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		result := b.complete(t, started.ExecutionID, "cancel", nil)

		require.Equal(t, completed{Outcome: ptr("canceled_by_flow_control"), WorkflowState: "canceled"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "canceled", got.State)
		require.Equal(t, t0, deref(got.CanceledAt))
		wf := b.workflow(t, id)
		require.Equal(t, "canceled", wf.State)
		require.Nil(t, wf.CurrentStepName)
		require.Equal(t, t0, deref(wf.CanceledAt))
		require.Equal(t, t0, deref(wf.TransitionedAt))
		b.noActive(t, id)
		b.create(t, "ThreeSteps", "1") // the hero's slot is free
	})

	t.Run("FinishedEndsWorkflowEarly", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		result := b.complete(t, started.ExecutionID, "finished", nil)

		require.Equal(t, completed{Outcome: ptr("success"), WorkflowState: "finished"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "completed", got.State)
		require.Equal(t, t0, deref(got.CompletedAt))
		wf := b.workflow(t, id)
		require.Equal(t, "finished", wf.State)
		require.Nil(t, wf.CurrentStepName)
		require.Nil(t, wf.NextStepName)
		require.Equal(t, t0, deref(wf.FinishedAt))
		require.Len(t, b.executions(t, id), 1)
	})

	t.Run("PauseKeepsStepForResume", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		b.setNow(t, t0.Add(hours(1)))
		started := b.run(t, id)

		result := b.complete(t, started.ExecutionID, "pause", nil)

		require.Equal(t, completed{Outcome: ptr("paused_by_flow_control"), WorkflowState: "paused"}, result)
		require.Equal(t, "canceled", b.execution(t, started.ExecutionID).State)
		wf := b.workflow(t, id)
		require.Equal(t, "b", deref(wf.NextStepName))
		require.Equal(t, t0.Add(hours(1)), deref(wf.PausedAt))
		b.noActive(t, id)

		// resume runs the same step anew, now (its own wait is not waited again)
		b.setNow(t, t0.Add(hours(3)))
		require.Equal(t, "ready", b.call(t, "resume_workflow", id))
		again := b.active(t, id)
		require.Equal(t, "b", again.StepName)
		require.Equal(t, t0.Add(hours(3)), again.ScheduledFor)
		require.Equal(t, "available", b.job(t, *again.JobID).State)
	})

	t.Run("RaisesForUnknownExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select * from geneva.complete_step(12345)")
		requireCode(t, err, "P0002")
		_, err = b.conn.Exec(b.ctx, "select * from geneva.complete_step(null)")
		requireCode(t, err, "22004")
	})

	t.Run("ReattemptSchedulesSameStepAfterWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		result := b.complete(t, started.ExecutionID, "reattempt", ptr(10*time.Minute))

		require.Equal(t, completed{Outcome: ptr("reattempted"), WorkflowState: "ready"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "completed", got.State)
		require.Equal(t, "flow_control", got.Metadata["reattempt_reason"])
		next := b.active(t, id)
		require.Equal(t, "a", next.StepName)
		require.Equal(t, t0.Add(10*time.Minute), next.ScheduledFor)
		wf := b.workflow(t, id)
		require.Equal(t, "ready", wf.State)
		require.Equal(t, "a", deref(wf.NextStepName))
		require.Nil(t, wf.CurrentStepName)

		// not due before its wait (time travel), due after
		b.setNow(t, t0.Add(9*time.Minute))
		_, ok := b.startStep(t, next.ID, nil)
		require.False(t, ok)
		b.setNow(t, t0.Add(10*time.Minute))
		_, ok = b.startStep(t, next.ID, nil)
		require.True(t, ok)
	})

	t.Run("ReattemptKeepsResumableCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		_, err := b.conn.Exec(b.ctx, `select geneva.checkpoint_step($1, '{"page": 9}')`, started.ExecutionID)
		require.NoError(t, err)

		b.complete(t, started.ExecutionID, "reattempt", nil)

		next := b.active(t, id)
		require.JSONEq(t, `{"page": 9}`, string(next.Cursor))
		require.Equal(t, started.ExecutionID, deref(next.ContinuesFromID))
		again := b.run(t, id)
		require.EqualValues(t, 2, again.Attempt)
		require.JSONEq(t, `{"page": 9}`, string(again.Cursor))
	})

	t.Run("ReattemptWithoutWaitSchedulesNow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")

		b.complete(t, b.run(t, id).ExecutionID, "reattempt", nil)

		next := b.active(t, id)
		require.Equal(t, t0, next.ScheduledFor)
		require.Equal(t, "available", b.job(t, *next.JobID).State)
	})

	t.Run("RecordsNothingWhenNoLongerInProgress", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.complete(t, started.ExecutionID, "success", nil)
		before := b.executions(t, id)

		result := b.complete(t, started.ExecutionID, "cancel", nil)

		require.Nil(t, result.Outcome)
		require.Equal(t, "ready", result.WorkflowState)
		require.Equal(t, before, b.executions(t, id))
	})

	t.Run("RejectsBadSignalAndWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		for _, c := range []struct {
			sql  string
			code string
		}{
			{"select * from geneva.complete_step($1, 'later')", "22023"},
			{"select * from geneva.complete_step($1, null)", "22004"},
			{"select * from geneva.complete_step($1, 'reattempt', '-1 minute')", "22023"},
			{"select * from geneva.complete_step($1, 'reattempt', '101 years')", "22023"},
			{"select * from geneva.complete_and_continue($1, 'suspend', '99999 years')", "22023"},
			{"select * from geneva.complete_step($1, 'success', '1 minute')", "22023"},
			{"select * from geneva.complete_step($1, 'skip', '1 minute')", "22023"},
		} {
			_, err := b.conn.Exec(b.ctx, c.sql, started.ExecutionID)
			requireCode(t, err, c.code)
		}
		require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State, "nothing was half-done")
	})

	t.Run("SkipSchedulesNextStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		result := b.complete(t, started.ExecutionID, "skip", nil)

		require.Equal(t, completed{Outcome: ptr("skipped_by_flow_control"), WorkflowState: "ready"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "skipped", got.State)
		require.Equal(t, t0, deref(got.SkippedAt))
		next := b.active(t, id)
		require.Equal(t, "b", next.StepName)
		require.Equal(t, t0.Add(hours(1)), next.ScheduledFor)
	})

	t.Run("SuccessOfStepNoLongerDefinedPauses", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		// a deploy removed step a while it ran
		b.define(t, "ThreeSteps", `{"steps": [{"name": "b"}, {"name": "c"}]}`)

		result := b.complete(t, started.ExecutionID, "success", nil)

		require.Equal(t, completed{Outcome: ptr("success"), WorkflowState: "paused"}, result, "rather than skip what remains")
		require.Equal(t, "a", deref(b.workflow(t, id).NextStepName))
		b.noActive(t, id)
	})

	t.Run("SuccessFinishesAfterLastStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")

		for _, step := range []string{"a", "b", "c"} {
			started := b.run(t, id)
			require.Equal(t, step, started.StepName)
			b.complete(t, started.ExecutionID, "success", nil)
			b.setNow(t, t0.Add(hours(1))) // past b's wait
		}

		wf := b.workflow(t, id)
		require.Equal(t, "finished", wf.State)
		require.Nil(t, wf.NextStepName)
		require.Nil(t, wf.CurrentStepName)
		require.Equal(t, t0.Add(hours(1)), deref(wf.FinishedAt))
		require.Equal(t, t0, deref(wf.StartedAt))
		for _, execution := range b.executions(t, id) {
			require.Equal(t, "completed", execution.State)
			require.Equal(t, "success", deref(execution.Outcome))
			require.NotNil(t, execution.FinishedAt)
		}
	})

	t.Run("SuccessSchedulesNextStepAfterItsWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		b.setNow(t, t0.Add(time.Minute))
		result := b.complete(t, started.ExecutionID, "success", nil)

		require.Equal(t, completed{Outcome: ptr("success"), WorkflowState: "ready"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "completed", got.State)
		require.Equal(t, t0.Add(time.Minute), deref(got.CompletedAt))
		require.Equal(t, t0.Add(time.Minute), deref(got.FinishedAt))
		next := b.active(t, id)
		require.Equal(t, "b", next.StepName)
		require.Equal(t, t0.Add(time.Minute+hours(1)), next.ScheduledFor)
		job := b.job(t, *next.JobID)
		require.Equal(t, "scheduled", job.State)
		require.Equal(t, "b", job.Args["step_name"])
		wf := b.workflow(t, id)
		require.Equal(t, "ready", wf.State)
		require.Equal(t, "b", deref(wf.NextStepName))
		require.Nil(t, wf.CurrentStepName)
	})

	t.Run("SuspendHandsCursorToSuccessor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		var stop bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.checkpoint_step($1, '{"page": 3}')`, started.ExecutionID).Scan(&stop))
		require.False(t, stop)

		result := b.complete(t, started.ExecutionID, "suspend", ptr(time.Minute))

		require.Equal(t, completed{Outcome: ptr("suspended"), WorkflowState: "ready"}, result)
		require.Equal(t, "completed", b.execution(t, started.ExecutionID).State)
		successor := b.active(t, id)
		require.Equal(t, "a", successor.StepName)
		require.Equal(t, started.ExecutionID, deref(successor.ContinuesFromID))
		require.JSONEq(t, `{"page": 3}`, string(successor.Cursor))
		require.Equal(t, t0.Add(time.Minute), successor.ScheduledFor)

		b.setNow(t, t0.Add(time.Minute))
		again := b.run(t, id)
		require.JSONEq(t, `{"page": 3}`, string(again.Cursor))
		require.Equal(t, started.ExecutionID, deref(again.ContinuesFromID))
	})
}
