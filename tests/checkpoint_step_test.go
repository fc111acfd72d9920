package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckpointStep(t *testing.T) {
	t.Parallel()

	t.Run("SavesCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		var stop bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.checkpoint_step($1, '{"offset": 500}')`, started.ExecutionID).Scan(&stop))

		require.False(t, stop)
		require.JSONEq(t, `{"offset": 500}`, string(b.execution(t, started.ExecutionID).Cursor))
	})

	t.Run("SaysStopWhenPauseOrCancelRequested", func(t *testing.T) {
		t.Parallel()
		for _, request := range []string{"pause_workflow", "cancel_workflow"} {
			t.Run(request, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.defineThreeSteps(t)
				id := b.create(t, "ThreeSteps", "1")
				started := b.run(t, id)
				b.call(t, request, id)

				var stop bool
				require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.checkpoint_step($1, '{"offset": 7}')`, started.ExecutionID).Scan(&stop))

				require.True(t, stop)
				require.JSONEq(t, `{"offset": 7}`, string(b.execution(t, started.ExecutionID).Cursor), "the cursor is saved for the successor")
			})
		}
	})

	t.Run("SaysStopWhenNoLongerInProgress", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.complete(t, started.ExecutionID, "success", nil)

		var stop bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.checkpoint_step($1, '{"offset": 9}')`, started.ExecutionID).Scan(&stop))

		require.True(t, stop)
		require.Nil(t, b.execution(t, started.ExecutionID).Cursor)
	})

	// A cursor the worker could not decode for the next execution is
	// refused, and the one saved stays (issue 44, item 2).
	t.Run("RefusesACursorNestedTooDeep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		started := b.run(t, b.create(t, "ThreeSteps", "1"))
		var stop bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.checkpoint_step($1, (repeat('[', 64) || repeat(']', 64))::jsonb)`,
			started.ExecutionID).Scan(&stop))
		for _, depth := range []int{65, 10001} {
			_, err := b.conn.Exec(b.ctx, `select geneva.checkpoint_step($1, (repeat('[', $2) || repeat(']', $2))::jsonb)`,
				started.ExecutionID, depth)
			requireCode(t, err, "22023")
		}
		require.Equal(t, strings.Repeat("[", 64)+strings.Repeat("]", 64), string(b.execution(t, started.ExecutionID).Cursor))
	})

	t.Run("RaisesForUnknownExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, `select geneva.checkpoint_step(12345, '{}')`)
		requireCode(t, err, "P0002")
		_, err = b.conn.Exec(b.ctx, `select geneva.checkpoint_step(null, '{}')`)
		requireCode(t, err, "22004")
	})
}
