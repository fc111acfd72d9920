package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTraceContext(t *testing.T) {
	t.Parallel()
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

	t.Run("CarriedToEveryStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Mail", `{"queue": "mail", "steps": [{"name": "a"}, {"name": "b"}]}`)
		var id int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('Mail', 'User', '1', p_trace_context => $1)", traceparent).Scan(&id))

		first := b.run(t, id)
		require.Equal(t, traceparent, deref(first.TraceContext))
		require.Equal(t, "mail", first.Queue)
		b.complete(t, first.ExecutionID, "success", nil)
		second := b.run(t, id)
		require.Equal(t, traceparent, deref(second.TraceContext))
	})

	t.Run("NoneByDefault", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		started := b.run(t, b.create(t, "ThreeSteps", "1"))
		require.Nil(t, started.TraceContext)
		require.Equal(t, "default", started.Queue)

		var id int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('ThreeSteps', 'User', '2', false, '')").Scan(&id))
		require.Nil(t, b.run(t, id).TraceContext)
	})

	t.Run("NotATraceparent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		_, err := b.conn.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1', false, 'trace me')")
		requireCode(t, err, "22023")
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows").Scan(&n))
		require.Zero(t, n)
	})
}
