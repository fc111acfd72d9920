package tests

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// history reads geneva.step_history on db as the executions' text forms.
func (b *testBundle) history(t *testing.T, db queryer, workflowID int64) []string {
	t.Helper()
	rows, err := db.Query(b.ctx, "select e::text from geneva.step_history($1) e", workflowID)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return all
}

// tableHistory is the same read from the table.
func (b *testBundle) tableHistory(t *testing.T, workflowID int64) []string {
	t.Helper()
	rows, err := b.conn.Query(b.ctx,
		"select e::text from geneva.step_executions e where e.workflow_id = $1 order by e.id", workflowID)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return all
}

func TestStepHistory(t *testing.T) {
	t.Parallel()

	// Every execution of the workflow, ended and active, in the order they
	// were made: a step run again appears each time.
	t.Run("ListsExecutionsInOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil) // a; b waits an hour
		b.setNow(t, t0.Add(time.Minute))
		b.call(t, "schedule_step", id) // b now instead

		rows, err := b.conn.Query(b.ctx, "select step_name, state, outcome from geneva.step_history($1)", id)
		require.NoError(t, err)
		type step struct {
			StepName string
			State    string
			Outcome  *string
		}
		got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[step])
		require.NoError(t, err)
		require.Equal(t, []step{
			{"a", "completed", ptr("success")},
			{"b", "canceled", ptr("canceled_externally")},
			{"b", "scheduled", nil},
		}, got)
		require.Equal(t, b.tableHistory(t, id), b.history(t, b.conn, id), "the rows as they are")
	})

	t.Run("OnlyTheWorkflowsOwn", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		first := b.create(t, "ThreeSteps", "1")
		second := b.create(t, "ThreeSteps", "2")
		b.complete(t, b.run(t, second).ExecutionID, "success", nil)

		require.Len(t, b.history(t, b.conn, first), 1)
		require.Len(t, b.history(t, b.conn, second), 2)
		require.Equal(t, b.tableHistory(t, first), b.history(t, b.conn, first))
	})

	t.Run("KeepsAnEndedWorkflowsHistory", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Empty", `{"steps": []}`)
		b.defineThreeSteps(t)
		empty := b.create(t, "Empty", "1")
		canceled := b.create(t, "ThreeSteps", "1")
		b.call(t, "cancel_workflow", canceled)

		require.Equal(t, "finished", b.workflow(t, empty).State)
		require.Empty(t, b.history(t, b.conn, empty), "a workflow without steps ran none")
		require.Equal(t, b.tableHistory(t, canceled), b.history(t, b.conn, canceled))
		require.Len(t, b.history(t, b.conn, canceled), 1)
	})

	// Security definer: every Geneva role reads it without privileges on
	// the table.
	t.Run("ReadsForEveryRole", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		want := b.tableHistory(t, id)

		for _, role := range []dbtest.Role{dbtest.App, dbtest.Operator, dbtest.Reader, dbtest.Worker} {
			require.Equal(t, want, b.history(t, dbtest.NewConnAs(t, b.conf, role), id), role)
		}
	})

	t.Run("RaisesForUnknownWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select * from geneva.step_history(12345)")

		pgErr := requireCode(t, err, "P0002")
		require.Equal(t, "workflows", pgErr.TableName)
	})

	t.Run("RaisesForNullId", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select * from geneva.step_history(null)")
		requireCode(t, err, "22004")
	})
}
