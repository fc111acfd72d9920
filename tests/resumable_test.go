package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestResumableCursor covers where a resumable step's cursor goes on every
// path that runs the step again: it survives all of them but a rewind and an
// operator's schedule_step or skip_step.
func TestResumableCursor(t *testing.T) {
	t.Parallel()

	// checkpoint starts the workflow's step and saves cursor; it returns the
	// execution's id.
	checkpoint := func(t *testing.T, b *testBundle, id int64, cursor string) int64 {
		t.Helper()
		started := b.run(t, id)
		var stop bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.checkpoint_step($1, $2::jsonb)`, started.ExecutionID, cursor).Scan(&stop))
		require.False(t, stop)
		return started.ExecutionID
	}

	t.Run("NullCursorOnlyAsks", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		executionID := checkpoint(t, b, id, `{"page": 4}`)

		var stop bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.checkpoint_step($1, null)`, executionID).Scan(&stop))
		require.False(t, stop)
		require.JSONEq(t, `{"page": 4}`, string(b.execution(t, executionID).Cursor), "the saved cursor is kept")

		b.call(t, "pause_workflow", id)
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.checkpoint_step($1, null)`, executionID).Scan(&stop))
		require.True(t, stop, "a step without a cursor learns of the pause too")

		// a first run that never saved one keeps none
		other := b.create(t, "ThreeSteps", "2")
		started := b.run(t, other)
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.checkpoint_step($1, null)`, started.ExecutionID).Scan(&stop))
		require.False(t, stop)
		require.Nil(t, b.execution(t, started.ExecutionID).Cursor)
	})

	t.Run("ErrorPauseThenResumeContinuesFromCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		executionID := checkpoint(t, b, id, `900000`)
		require.Equal(t, "paused", b.fail(t, executionID, []string{"ImportError"}, "row 900001 is bad").WorkflowState)

		require.Equal(t, "ready", b.call(t, "resume_workflow", id))

		next := b.active(t, id)
		require.Equal(t, "a", next.StepName)
		require.JSONEq(t, `900000`, string(next.Cursor), "the import does not restart at row 0")
		require.Equal(t, executionID, deref(next.ContinuesFromID))
		started := b.run(t, id)
		require.JSONEq(t, `900000`, string(started.Cursor))
		require.Equal(t, executionID, deref(started.ContinuesFromID))
	})

	t.Run("PauseSignalThenResumeContinuesFromCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		executionID := checkpoint(t, b, id, `"token-7"`)
		require.Equal(t, "paused", b.complete(t, executionID, "pause", nil).WorkflowState)

		b.call(t, "resume_workflow", id)

		next := b.active(t, id)
		require.JSONEq(t, `"token-7"`, string(next.Cursor))
		require.Equal(t, executionID, deref(next.ContinuesFromID))
	})

	t.Run("ResumeOfPlainStepHasNoCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")

		b.call(t, "resume_workflow", id)

		next := b.active(t, id)
		require.Nil(t, next.Cursor)
		require.Nil(t, next.ContinuesFromID)
	})

	t.Run("ExceptionReattemptBeforeAnyCheckpointKeepsTheInheritedCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Import", `{"steps": [{"name": "a", "on_exception": {"action": "reattempt"}}, {"name": "b"}]}`)
		id := b.create(t, "Import", "1")
		first := checkpoint(t, b, id, `{"after": 500}`)
		b.complete(t, first, "suspend", nil)
		second := b.run(t, id) // fails before it checkpoints
		b.fail(t, second.ExecutionID, []string{"Timeout"}, "timeout")

		third := b.active(t, id)
		require.JSONEq(t, `{"after": 500}`, string(third.Cursor))
		require.Equal(t, second.ExecutionID, deref(third.ContinuesFromID))
	})

	t.Run("RewindStartsFromNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		executionID := checkpoint(t, b, id, `42`)
		wait := time.Minute

		result := b.complete(t, executionID, "reattempt_rewind", &wait)

		require.Equal(t, "reattempted", deref(result.Outcome))
		ended := b.execution(t, executionID)
		require.Equal(t, true, ended.Metadata["rewind"])
		require.JSONEq(t, `42`, string(ended.Cursor), "the ended execution keeps where it got to")
		next := b.active(t, id)
		require.Nil(t, next.Cursor)
		require.Nil(t, next.ContinuesFromID)
		require.Equal(t, t0.Add(time.Minute), next.ScheduledFor.Local())
	})

	t.Run("RewindThenErrorPauseResumesWithoutOldCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, checkpoint(t, b, id, `42`), "reattempt_rewind", nil)
		b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")

		b.call(t, "resume_workflow", id)

		require.Nil(t, b.active(t, id).Cursor)
	})

	t.Run("OperatorScheduleAndSkipStartFresh", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, checkpoint(t, b, id, `7`), "suspend", nil)
		require.JSONEq(t, `7`, string(b.active(t, id).Cursor))

		_, err := b.conn.Exec(b.ctx, `select geneva.schedule_step($1, 'a')`, id)
		require.NoError(t, err)
		require.Nil(t, b.active(t, id).Cursor, "schedule_step starts the step fresh")

		b.complete(t, checkpoint(t, b, id, `8`), "suspend", nil)
		b.call(t, "skip_step", id)
		next := b.active(t, id)
		require.Equal(t, "b", next.StepName)
		require.Nil(t, next.Cursor)
	})

	t.Run("TimelineShowsCursorAndChain", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		first := checkpoint(t, b, id, `100`)
		b.complete(t, first, "suspend", nil)
		second := checkpoint(t, b, id, `200`)

		type row struct {
			ExecutionID     int64
			Cursor          []byte
			ContinuesFromID *int64
		}
		got := viewRows[row](t, b, `select execution_id, cursor, continues_from_id
			from geneva.workflow_timeline where workflow_id = $1 order by execution_id`, id)
		require.Len(t, got, 2)
		require.Equal(t, first, got[0].ExecutionID)
		require.JSONEq(t, `100`, string(got[0].Cursor))
		require.Nil(t, got[0].ContinuesFromID)
		require.Equal(t, second, got[1].ExecutionID)
		require.JSONEq(t, `200`, string(got[1].Cursor))
		require.Equal(t, first, deref(got[1].ContinuesFromID))
	})
}
