package tests

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// continued is the row complete_and_continue returns.
type continued struct {
	Outcome             *string
	WorkflowState       string
	NextExecutionID     *int64
	NextStepName        *string
	NextAttempt         *int32
	NextStartedAt       *time.Time
	NextCursor          json.RawMessage
	NextContinuesFromID *int64
	NextEventID         *int64
	NextEventName       *string
	NextEventPayload    json.RawMessage
	NextEventSentAt     *time.Time
	NextHTTP            json.RawMessage
	NextEventSentBy     *string
}

func (b *testBundle) continueStep(t *testing.T, executionID int64, signal string, wait *time.Duration) continued {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select * from geneva.complete_and_continue($1, $2, $3)", executionID, signal, wait)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[continued])
	require.NoError(t, err)
	return row
}

func TestCompleteAndContinue(t *testing.T) {
	t.Parallel()

	// Three steps without waits: each started in the transaction that ends
	// the one before, without a River job, until the workflow finishes.
	t.Run("StartsTheNextStepWithoutAJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Quick", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)
		id := b.create(t, "Quick", "1")
		first := b.run(t, id)

		b.setNow(t, t0.Add(time.Second))
		result := b.continueStep(t, first.ExecutionID, "success", nil)

		require.Equal(t, "success", deref(result.Outcome))
		require.Equal(t, "performing", result.WorkflowState)
		require.Equal(t, "b", deref(result.NextStepName))
		require.EqualValues(t, 1, deref(result.NextAttempt))
		require.Equal(t, t0.Add(time.Second), deref(result.NextStartedAt))
		next := b.execution(t, deref(result.NextExecutionID))
		require.Equal(t, "in_progress", next.State)
		require.Nil(t, next.JobID, "no River job")
		require.Equal(t, t0.Add(time.Second), next.ScheduledFor)
		require.Equal(t, t0.Add(time.Second), deref(next.StartedAt))
		wf := b.workflow(t, id)
		require.Equal(t, "performing", wf.State)
		require.Equal(t, "b", deref(wf.CurrentStepName))
		require.Nil(t, wf.TransitionedAt)
		require.Equal(t, t0, deref(wf.StartedAt), "the workflow's start stays its first step's")
		require.Equal(t, 1, b.stepJobs(t, id), "only the first step's job")

		result = b.continueStep(t, next.ID, "success", nil)
		require.Equal(t, "c", deref(result.NextStepName))
		result = b.continueStep(t, deref(result.NextExecutionID), "success", nil)

		require.Equal(t, "finished", result.WorkflowState)
		require.Nil(t, result.NextExecutionID)
		require.Equal(t, "finished", b.workflow(t, id).State)
		b.noActive(t, id)
		require.Equal(t, 1, b.stepJobs(t, id))
	})

	t.Run("DoesNotStartWhatMustWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Waits", `{"steps": [{"name": "a"}, {"name": "b", "wait": "1 hour"}]}`)
		b.define(t, "Canceling", `{"steps": [{"name": "a"}, {"name": "b"}], "cancel_if": ["closed"]}`)
		b.define(t, "Skipping", `{"steps": [{"name": "a"}, {"name": "b", "skip_if": "condition"}]}`)
		b.define(t, "AlwaysSkips", `{"steps": [{"name": "a"}, {"name": "b", "skip_if": true}]}`)

		for _, workflowType := range []string{"Waits", "Canceling", "Skipping", "AlwaysSkips"} {
			id := b.create(t, workflowType, "1")
			started := b.run(t, id)

			result := b.continueStep(t, started.ExecutionID, "success", nil)

			require.Equal(t, "ready", result.WorkflowState, workflowType)
			require.Nil(t, result.NextExecutionID, workflowType)
			next := b.active(t, id)
			require.Equal(t, "scheduled", next.State, workflowType)
			require.NotNil(t, next.JobID, "%s: scheduled with its job, as complete_step does", workflowType)
			require.Equal(t, 1, b.jobCount(t, next.ID), workflowType)
		}
	})

	t.Run("ReattemptAndSuspendContinueTheSameStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Loop", `{"steps": [{"name": "a"}, {"name": "b"}]}`)
		id := b.create(t, "Loop", "1")
		first := b.run(t, id)

		result := b.continueStep(t, first.ExecutionID, "reattempt", nil)
		require.Equal(t, "reattempted", deref(result.Outcome))
		require.Equal(t, "a", deref(result.NextStepName))
		require.EqualValues(t, 2, deref(result.NextAttempt))

		second := deref(result.NextExecutionID)
		_, err := b.conn.Exec(b.ctx, `select geneva.checkpoint_step($1, '{"page": 3}')`, second)
		require.NoError(t, err)
		result = b.continueStep(t, second, "suspend", nil)
		require.Equal(t, "suspended", deref(result.Outcome))
		require.Equal(t, "a", deref(result.NextStepName))
		require.JSONEq(t, `{"page": 3}`, string(result.NextCursor))
		require.Equal(t, second, deref(result.NextContinuesFromID))

		wait := time.Minute
		result = b.continueStep(t, deref(result.NextExecutionID), "reattempt", &wait)
		require.Nil(t, result.NextExecutionID, "a reattempt that waits gets a job")
		require.Equal(t, "ready", result.WorkflowState)
		require.NotNil(t, b.active(t, id).JobID)
	})

	t.Run("OperatorRequestsApplyFirst", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Quick", `{"steps": [{"name": "a"}, {"name": "b"}]}`)
		paused := b.create(t, "Quick", "1")
		canceled := b.create(t, "Quick", "2")
		pausedStep, canceledStep := b.run(t, paused), b.run(t, canceled)
		b.call(t, "pause_workflow", paused)
		b.call(t, "cancel_workflow", canceled)

		result := b.continueStep(t, pausedStep.ExecutionID, "success", nil)
		require.Equal(t, "paused", result.WorkflowState)
		require.Nil(t, result.NextExecutionID)
		kept := b.active(t, paused)
		require.Equal(t, "scheduled", kept.State)
		require.Nil(t, kept.JobID, "kept for resume, which enqueues it")

		result = b.continueStep(t, canceledStep.ExecutionID, "success", nil)
		require.Equal(t, "canceled", result.WorkflowState)
		require.Nil(t, result.NextExecutionID)
		b.noActive(t, canceled)
	})

	t.Run("CalledAgainHandsOverTheStepItStarted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Quick", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)
		id := b.create(t, "Quick", "1")
		started := b.run(t, id)
		first := b.continueStep(t, started.ExecutionID, "success", nil)
		require.NotNil(t, first.NextExecutionID)

		// the reply to the first call was lost; the worker tries again
		again := b.continueStep(t, started.ExecutionID, "success", nil)

		require.Nil(t, again.Outcome, "nothing is recorded twice")
		require.Equal(t, "performing", again.WorkflowState)
		require.Equal(t, first.NextExecutionID, again.NextExecutionID, "the step the first call started")
		require.Equal(t, "b", deref(again.NextStepName))
		require.Len(t, b.executions(t, id), 2)

		// once that step has moved on, there is nothing to hand over
		b.continueStep(t, *first.NextExecutionID, "success", nil)
		late := b.continueStep(t, started.ExecutionID, "success", nil)
		require.Nil(t, late.Outcome)
		require.Nil(t, late.NextExecutionID)
		require.Len(t, b.executions(t, id), 3)
	})

	t.Run("ExecutionThatMovedOnRecordsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Quick", `{"steps": [{"name": "a"}, {"name": "b", "wait": "1 hour"}]}`)
		id := b.create(t, "Quick", "1")
		started := b.run(t, id)
		b.continueStep(t, started.ExecutionID, "success", nil)

		result := b.continueStep(t, started.ExecutionID, "success", nil)

		require.Nil(t, result.Outcome)
		require.Equal(t, "ready", result.WorkflowState)
		require.Nil(t, result.NextExecutionID)
		require.Len(t, b.executions(t, id), 2)
	})

	t.Run("NextStepNoLongerDefinedGetsItsJob", func(t *testing.T) {
		t.Parallel()
		for _, signal := range []string{"reattempt", "suspend"} {
			t.Run(signal, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.setNow(t, t0)
				b.define(t, "Quick", `{"steps": [{"name": "a"}, {"name": "b"}]}`)
				id := b.create(t, "Quick", "1")
				started := b.run(t, id)
				// a deploy removes the running step
				b.define(t, "Quick", `{"steps": [{"name": "b"}]}`)

				result := b.continueStep(t, started.ExecutionID, signal, nil)

				require.Equal(t, "ready", result.WorkflowState)
				require.Nil(t, result.NextExecutionID, "not started here")
				next := b.active(t, id)
				require.Equal(t, "a", next.StepName)
				require.Equal(t, "scheduled", next.State)
				require.NotNil(t, next.JobID, "its job will find it gone (step_not_defined)")
				_, ok := b.startStep(t, next.ID, nil)
				require.False(t, ok)
				require.Equal(t, "step_not_defined", deref(b.execution(t, next.ID).Outcome))
				require.Equal(t, "paused", b.workflow(t, id).State)
			})
		}
	})

	t.Run("RefusesWhatCompleteStepRefuses", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Quick", `{"steps": [{"name": "a"}]}`)
		started := b.run(t, b.create(t, "Quick", "1"))
		for query, code := range map[string]string{
			"select * from geneva.complete_and_continue($1, 'later')":                  "22023",
			"select * from geneva.complete_and_continue($1, null)":                     "22004",
			"select * from geneva.complete_and_continue($1, 'skip', '1 minute')":       "22023",
			"select * from geneva.complete_and_continue($1, 'reattempt', '-1 minute')": "22023",
		} {
			_, err := b.conn.Exec(b.ctx, query, started.ExecutionID)
			requireCode(t, err, code)
		}
		_, err := b.conn.Exec(b.ctx, "select * from geneva.complete_and_continue(12345)")
		requireCode(t, err, "P0002")
	})
}

// stepJobs counts the River jobs ever inserted for the workflow's executions.
func (b *testBundle) stepJobs(t *testing.T, workflowID int64) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select count(*) from public.river_job
		where kind = 'geneva_step' and (args ->> 'workflow_id')::bigint = $1`, workflowID).Scan(&n))
	return n
}
