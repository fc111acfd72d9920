package tests

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// rowText reads one row of a query as its text form, to compare whole rows.
func rowText(t *testing.T, b *testBundle, db queryer, sql string, args ...any) string {
	t.Helper()
	rows, err := db.Query(b.ctx, sql, args...)
	require.NoError(t, err)
	text, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return text
}

func TestGetWorkflow(t *testing.T) {
	t.Parallel()

	// The workflow's row as it is, whatever its state.
	t.Run("ReturnsTheWorkflowRow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		ready := b.create(t, "ThreeSteps", "1")
		performing := b.create(t, "ThreeSteps", "2")
		b.run(t, performing)
		paused := b.create(t, "ThreeSteps", "3")
		b.call(t, "pause_workflow", paused)
		canceled := b.create(t, "ThreeSteps", "4")
		b.call(t, "cancel_workflow", canceled)

		for _, id := range []int64{ready, performing, paused, canceled} {
			require.Equal(t,
				rowText(t, b, b.conn, "select w::text from geneva.workflows w where w.id = $1", id),
				rowText(t, b, b.conn, "select w::text from geneva.get_workflow($1) w", id))
		}
		var state string
		var step *string
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select state, current_step_name from geneva.get_workflow($1)", performing).Scan(&state, &step))
		require.Equal(t, "performing", state)
		require.Equal(t, "a", deref(step))
	})

	// Security definer: every Geneva role reads it without privileges on
	// the table.
	t.Run("ReadsForEveryRole", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		want := rowText(t, b, b.conn, "select w::text from geneva.workflows w where w.id = $1", id)

		for _, role := range []dbtest.Role{dbtest.App, dbtest.Operator, dbtest.Reader, dbtest.Worker} {
			conn := dbtest.NewConnAs(t, b.conf, role)
			require.Equal(t, want, rowText(t, b, conn, "select w::text from geneva.get_workflow($1) w", id), role)
			_, err := conn.Exec(b.ctx, "select * from geneva.workflows")
			requireCode(t, err, "42501")
		}
	})

	t.Run("RaisesForUnknownWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select geneva.get_workflow(12345)")

		pgErr := requireCode(t, err, "P0002")
		require.Equal(t, "workflows", pgErr.TableName)
	})

	t.Run("RaisesForNullId", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select geneva.get_workflow(null)")
		requireCode(t, err, "22004")
	})
}
