package tests

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestGetStepExecution(t *testing.T) {
	t.Parallel()

	// The execution's row as it is, whatever its state.
	t.Run("ReturnsTheExecutionRow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		_, err := b.conn.Exec(b.ctx, `select geneva.checkpoint_step($1, '{"page": 2}')`, started.ExecutionID)
		require.NoError(t, err)
		inProgress := started.ExecutionID
		b.complete(t, started.ExecutionID, "success", nil)
		scheduled := b.active(t, id).ID
		other := b.create(t, "ThreeSteps", "2")
		failed := b.run(t, other).ExecutionID
		b.fail(t, failed, []string{"Boom"}, "boom")

		for _, executionID := range []int64{inProgress, scheduled, failed} {
			require.Equal(t,
				rowText(t, b, b.conn, "select e::text from geneva.step_executions e where e.id = $1", executionID),
				rowText(t, b, b.conn, "select e::text from geneva.get_step_execution($1) e", executionID))
		}
		var state, stepName string
		var cursor []byte
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select state, step_name, cursor from geneva.get_step_execution($1)", inProgress).Scan(&state, &stepName, &cursor))
		require.Equal(t, "completed", state)
		require.Equal(t, "a", stepName)
		require.JSONEq(t, `{"page": 2}`, string(cursor))
	})

	// Security definer: every Geneva role reads it without privileges on
	// the table.
	t.Run("ReadsForEveryRole", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		executionID := b.active(t, id).ID
		want := rowText(t, b, b.conn, "select e::text from geneva.step_executions e where e.id = $1", executionID)

		for _, role := range []dbtest.Role{dbtest.App, dbtest.Operator, dbtest.Reader, dbtest.Worker} {
			conn := dbtest.NewConnAs(t, b.conf, role)
			require.Equal(t, want, rowText(t, b, conn, "select e::text from geneva.get_step_execution($1) e", executionID), role)
			_, err := conn.Exec(b.ctx, "select * from geneva.step_executions")
			requireCode(t, err, "42501")
		}
	})

	t.Run("RaisesForUnknownExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select geneva.get_step_execution(12345)")

		pgErr := requireCode(t, err, "P0002")
		require.Equal(t, "step_executions", pgErr.TableName)
	})

	t.Run("RaisesForNullId", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select geneva.get_step_execution(null)")
		requireCode(t, err, "22004")
	})
}
