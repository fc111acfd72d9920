package tests

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// stepDefined calls geneva.step_defined on db.
func (b *testBundle) stepDefined(t *testing.T, db queryer, workflowType, stepName *string) bool {
	t.Helper()
	rows, err := db.Query(b.ctx, "select geneva.step_defined($1, $2)", workflowType, stepName)
	require.NoError(t, err)
	defined, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[bool])
	require.NoError(t, err)
	return defined
}

func TestStepDefined(t *testing.T) {
	t.Parallel()

	t.Run("TrueForEachStepOfTheDefinition", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		for _, step := range []string{"a", "b", "c"} {
			require.True(t, b.stepDefined(t, b.conn, ptr("ThreeSteps"), ptr(step)), step)
		}
	})

	t.Run("FalseForUnknownStepOrType", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.define(t, "Empty", `{"steps": []}`)

		for _, c := range []struct{ workflowType, step string }{
			{"ThreeSteps", "d"},
			{"ThreeSteps", "A"},
			{"ThreeSteps", ""},
			{"Empty", "a"},
			{"Unknown", "a"},
		} {
			require.False(t, b.stepDefined(t, b.conn, ptr(c.workflowType), ptr(c.step)), "%+v", c)
		}
	})

	t.Run("FalseForNulls", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		require.False(t, b.stepDefined(t, b.conn, nil, ptr("a")))
		require.False(t, b.stepDefined(t, b.conn, ptr("ThreeSteps"), nil))
		require.False(t, b.stepDefined(t, b.conn, nil, nil))
	})

	// A newer worker registered another step list: the database's
	// definition is the one that answers.
	t.Run("FollowsTheRegisteredDefinition", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		b.define(t, "ThreeSteps", `{"steps": [{"name": "a"}, {"name": "b", "wait": "1 hour"}, {"name": "d"}]}`)

		require.True(t, b.stepDefined(t, b.conn, ptr("ThreeSteps"), ptr("d")))
		require.False(t, b.stepDefined(t, b.conn, ptr("ThreeSteps"), ptr("c")))
	})

	// Worker protocol: a worker, which has no privilege on the definitions'
	// table, may ask.
	t.Run("WorkersMayAsk", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)

		require.True(t, b.stepDefined(t, worker, ptr("ThreeSteps"), ptr("b")))
		require.False(t, b.stepDefined(t, worker, ptr("ThreeSteps"), ptr("d")))
		_, err := worker.Exec(b.ctx, "select * from geneva.workflow_definitions")
		requireCode(t, err, "42501")
	})
}
