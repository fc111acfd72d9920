package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStartStep(t *testing.T) {
	t.Parallel()

	t.Run("CancelIfCancelsWorkflowWithoutStarting", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		execution := b.active(t, id)

		_, ok := b.startStep(t, execution.ID, ptr("cancel"))

		require.False(t, ok)
		got := b.execution(t, execution.ID)
		require.Equal(t, "canceled", got.State)
		require.Equal(t, "canceled_by_condition", deref(got.Outcome))
		require.Nil(t, got.StartedAt)
		require.Equal(t, t0, deref(got.CanceledAt))
		require.Equal(t, t0, deref(got.FinishedAt))
		wf := b.workflow(t, id)
		require.Equal(t, "canceled", wf.State)
		require.Nil(t, wf.StartedAt, "the workflow never performed")
		require.Equal(t, t0, deref(wf.CanceledAt))
		require.Equal(t, t0, deref(wf.TransitionedAt))
		require.Len(t, b.executions(t, id), 1)
	})

	t.Run("ClaimsDueExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "42")
		execution := b.active(t, id)

		started, ok := b.startStep(t, execution.ID, nil)

		require.True(t, ok)
		require.Equal(t, startedStep{
			ExecutionID:  execution.ID,
			WorkflowID:   id,
			WorkflowType: "ThreeSteps",
			HeroType:     "User",
			HeroID:       "42",
			StepName:     "a",
			Attempt:      1,
			ScheduledFor: t0,
			StartedAt:    t0,
			Queue:        "default",
			// a first attempt's key is its own id
			IdempotencyKey: &execution.ID,
		}, started)
		got := b.execution(t, execution.ID)
		require.Equal(t, "in_progress", got.State)
		require.Nil(t, got.Outcome)
		require.Equal(t, t0, deref(got.StartedAt))
		wf := b.workflow(t, id)
		require.Equal(t, "performing", wf.State)
		require.Equal(t, "a", deref(wf.CurrentStepName))
		require.Equal(t, "a", deref(wf.NextStepName))
		require.Equal(t, t0, deref(wf.StartedAt))
	})

	t.Run("CountsAttemptsOfTheStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")

		first := b.run(t, id)
		b.complete(t, first.ExecutionID, "reattempt", nil)
		second := b.run(t, id)

		require.EqualValues(t, 1, first.Attempt)
		require.EqualValues(t, 2, second.Attempt)
		require.Equal(t, "a", second.StepName)
	})

	t.Run("DoesNothingForExecutionOfFinishedWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		id := b.create(t, "One", "1")
		started := b.run(t, id)
		b.complete(t, started.ExecutionID, "success", nil)
		require.Equal(t, "finished", b.workflow(t, id).State)
		before := b.execution(t, started.ExecutionID)

		_, ok := b.startStep(t, started.ExecutionID, nil)

		require.False(t, ok)
		require.Equal(t, before, b.execution(t, started.ExecutionID))
		require.Equal(t, "finished", b.workflow(t, id).State)
	})

	t.Run("DoesNothingTwice", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		executionBefore := b.execution(t, started.ExecutionID)
		workflowBefore := b.workflow(t, id)

		b.setNow(t, t0.Add(time.Minute))
		_, ok := b.startStep(t, started.ExecutionID, nil)

		require.False(t, ok)
		require.Equal(t, executionBefore, b.execution(t, started.ExecutionID))
		require.Equal(t, workflowBefore, b.workflow(t, id))
		// nor do late preconditions change anything
		_, ok = b.startStep(t, started.ExecutionID, ptr("cancel"))
		require.False(t, ok)
		require.Equal(t, executionBefore, b.execution(t, started.ExecutionID))
	})

	t.Run("DoesNothingEarlyAndKeepsItsJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil) // b is due in an hour
		execution := b.active(t, id)
		require.Equal(t, t0.Add(hours(1)), execution.ScheduledFor)

		b.setNow(t, t0.Add(59*time.Minute))
		_, ok := b.startStep(t, execution.ID, nil)
		require.False(t, ok)
		_, ok = b.startStep(t, execution.ID, ptr("skip"))
		require.False(t, ok)

		require.Equal(t, execution, b.execution(t, execution.ID))
		require.Equal(t, 1, b.jobCount(t, execution.ID), "its job still waits in River")
		require.Equal(t, "ready", b.workflow(t, id).State)

		b.setNow(t, t0.Add(hours(1)))
		_, ok = b.startStep(t, execution.ID, nil)
		require.True(t, ok, "due at its time")
	})

	t.Run("EarlyJobThatRanLeavesAJobForLater", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		execution := b.active(t, id)
		// River ran the execution's job early (it is no longer waiting)
		_, err := b.conn.Exec(b.ctx, "update public.river_job set state = 'running', attempted_at = now() where id = $1", *execution.JobID)
		require.NoError(t, err)

		_, ok := b.startStep(t, execution.ID, nil)

		require.False(t, ok)
		got := b.execution(t, execution.ID)
		require.Equal(t, "scheduled", got.State)
		require.NotEqual(t, *execution.JobID, deref(got.JobID))
		job := b.job(t, *got.JobID)
		require.Equal(t, "scheduled", job.State)
		require.WithinDuration(t, b.dbNow(t).Add(hours(1)), job.ScheduledAt, time.Minute)
	})

	t.Run("HeroMissingCancelsWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		execution := b.active(t, id)

		_, ok := b.startStep(t, execution.ID, ptr("hero_missing"))

		require.False(t, ok)
		got := b.execution(t, execution.ID)
		require.Equal(t, "canceled", got.State)
		require.Equal(t, "canceled_hero_missing", deref(got.Outcome))
		require.Equal(t, "canceled", b.workflow(t, id).State)
	})

	t.Run("HeroMissingRunsWhenDefinitionAllows", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Tolerant", `{"steps": [{"name": "a"}], "may_proceed_without_hero": true}`)
		id := b.create(t, "Tolerant", "1")
		execution := b.active(t, id)

		started, ok := b.startStep(t, execution.ID, ptr("hero_missing"))

		require.True(t, ok)
		require.Equal(t, "a", started.StepName)
		require.Equal(t, "performing", b.workflow(t, id).State)
	})

	t.Run("KeepsExecutionOfPausedWorkflowScheduled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		execution := b.active(t, id)
		b.call(t, "pause_workflow", id)

		b.setNow(t, t0.Add(hours(5)))
		_, ok := b.startStep(t, execution.ID, nil)

		require.False(t, ok)
		require.Equal(t, execution, b.execution(t, execution.ID))
		require.Equal(t, "paused", b.workflow(t, id).State)
	})

	t.Run("LiteralSkipIfSkipsInSQL", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Skippy", `{"steps": [{"name": "a", "skip_if": true}, {"name": "b", "skip_if": false}]}`)
		id := b.create(t, "Skippy", "1")
		a := b.active(t, id)

		_, ok := b.startStep(t, a.ID, nil)

		require.False(t, ok)
		require.Equal(t, "skipped_by_condition", deref(b.execution(t, a.ID).Outcome))
		next := b.run(t, id)
		require.Equal(t, "b", next.StepName, "skip_if false runs the step")
	})

	t.Run("RejectsUnknownPrecondition", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, _, err := startStepOn(b.ctx, b.conn, 1, ptr("maybe"))

		requireCode(t, err, "22023")
	})

	t.Run("RaisesForUnknownExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, _, err := startStepOn(b.ctx, b.conn, 12345, nil)
		requireCode(t, err, "P0002")
		_, _, err = startStepOn(b.ctx, b.conn, 0, nil)
		requireCode(t, err, "P0002")
		_, err = b.conn.Exec(b.ctx, "select * from geneva.start_step(null)")
		requireCode(t, err, "22004")
	})

	t.Run("SkipIfSkipsAndSchedulesNext", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		a := b.active(t, id)

		_, ok := b.startStep(t, a.ID, ptr("skip"))

		require.False(t, ok)
		got := b.execution(t, a.ID)
		require.Equal(t, "skipped", got.State)
		require.Equal(t, "skipped_by_condition", deref(got.Outcome))
		require.Nil(t, got.StartedAt)
		require.Equal(t, t0, deref(got.SkippedAt))
		next := b.active(t, id)
		require.Equal(t, "b", next.StepName)
		require.Equal(t, t0.Add(hours(1)), next.ScheduledFor, "the next step waits its own wait")
		wf := b.workflow(t, id)
		require.Equal(t, "ready", wf.State)
		require.Equal(t, "b", deref(wf.NextStepName))
		require.Nil(t, wf.StartedAt)
	})

	t.Run("SkipIfOnLastStepFinishes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		id := b.create(t, "One", "1")

		_, ok := b.startStep(t, b.active(t, id).ID, ptr("skip"))

		require.False(t, ok)
		require.Equal(t, "finished", b.workflow(t, id).State)
		b.noActive(t, id)
	})

	t.Run("StepNoLongerDefinedPausesWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		execution := b.active(t, id)
		// a deploy renamed the step
		b.define(t, "ThreeSteps", `{"steps": [{"name": "a2"}, {"name": "b"}, {"name": "c"}]}`)

		_, ok := b.startStep(t, execution.ID, nil)

		require.False(t, ok)
		got := b.execution(t, execution.ID)
		require.Equal(t, "failed", got.State)
		require.Equal(t, "step_not_defined", deref(got.Outcome))
		require.Contains(t, deref(got.ErrorMessage), "a")
		require.Equal(t, t0, deref(got.FailedAt))
		wf := b.workflow(t, id)
		require.Equal(t, "paused", wf.State)
		require.Equal(t, "a", deref(wf.NextStepName))
		require.Equal(t, t0, deref(wf.PausedAt))
		b.noActive(t, id)

		// an operator skips it: the old name is not in the list, so skip finishes
		require.Equal(t, "finished", b.call(t, "skip_step", id))
	})
}
