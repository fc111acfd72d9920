package tests

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestListWorkflows(t *testing.T) {
	t.Parallel()

	t.Run("FiltersByState", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		ready := b.create(t, "ThreeSteps", "1")
		paused := b.create(t, "ThreeSteps", "2")
		b.call(t, "pause_workflow", paused)

		for state, want := range map[string][]int64{"ready": {ready}, "paused": {paused}, "finished": {}} {
			rows, err := b.conn.Query(b.ctx, "select id from geneva.list_workflows($1)", state)
			require.NoError(t, err)
			ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			require.NoError(t, err)
			require.Equal(t, want, ids, state)
		}
	})

	t.Run("RaisesForUnknownState", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select * from geneva.list_workflows('bogus')")

		pgErr := requireCode(t, err, "22023")
		require.Contains(t, pgErr.Message, "bogus")
	})
}
