package tests

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func (b *testBundle) interrupt(t *testing.T, executionID int64) completed {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select * from geneva.interrupt_step($1)", executionID)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[completed])
	require.NoError(t, err)
	return row
}

func TestInterruptStep(t *testing.T) {
	t.Parallel()

	t.Run("GivesStepBackWithItsCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		_, err := b.conn.Exec(b.ctx, `select geneva.checkpoint_step($1, '{"offset": 40}')`, started.ExecutionID)
		require.NoError(t, err)

		result := b.interrupt(t, started.ExecutionID)

		require.Equal(t, completed{Outcome: ptr("recovered"), WorkflowState: "ready"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "completed", got.State)
		require.Equal(t, "interrupted", got.Metadata["recovery_reason"])
		next := b.active(t, id)
		require.Equal(t, "a", next.StepName)
		require.Equal(t, t0, next.ScheduledFor, "again now")
		require.JSONEq(t, `{"offset": 40}`, string(next.Cursor))
		require.Equal(t, started.ExecutionID, deref(next.ContinuesFromID))
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

		result := b.interrupt(t, started.ExecutionID)

		require.Nil(t, result.Outcome)
		require.Equal(t, before, b.executions(t, id))
	})

	t.Run("AppliesRequestedCancel", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.call(t, "cancel_workflow", id)

		result := b.interrupt(t, started.ExecutionID)

		require.Equal(t, completed{Outcome: ptr("recovered"), WorkflowState: "canceled"}, result)
		b.noActive(t, id)
	})

	t.Run("RaisesForUnknownExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select * from geneva.interrupt_step(12345)")
		requireCode(t, err, "P0002")
	})
}
