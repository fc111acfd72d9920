package tests

import (
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestErrorClasses(t *testing.T) {
	t.Parallel()

	t.Run("ChainRecordedWithItsFirstClass", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)

		// what the Go worker sends for fmt.Errorf("charging: %w", &net.OpError{...})
		_, err := b.conn.Exec(b.ctx, `select geneva.fail_step($1, $2, 'charging: dial tcp: refused',
			p_error_chain => $3)`, started.ExecutionID,
			[]string{"*fmt.wrapError", "*net.OpError", "*os.SyscallError"},
			[]string{"*net.OpError", "*fmt.wrapError", "*os.SyscallError"})
		require.NoError(t, err)

		var class string
		var classes []string
		require.NoError(t, b.conn.QueryRow(b.ctx, `select error_class_name, error_classes
			from geneva.step_executions where id = $1`, started.ExecutionID).Scan(&class, &classes))
		require.Equal(t, "*net.OpError", class)
		require.Equal(t, []string{"*net.OpError", "*fmt.wrapError", "*os.SyscallError"}, classes)

		// the views expose every class, so a query finds it however it was wrapped
		var found int64
		require.NoError(t, b.conn.QueryRow(b.ctx, `select workflow_id from geneva.paused_workflows
			where last_error_class = '*net.OpError' and '*os.SyscallError' = any(error_classes)`).Scan(&found))
		require.Equal(t, id, found)
		require.NoError(t, b.conn.QueryRow(b.ctx, `select workflow_id from geneva.workflow_timeline
			where '*os.SyscallError' = any(error_classes)`).Scan(&found))
		require.Equal(t, id, found)
	})

	t.Run("WithoutChainTheClassesAreRecorded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)

		b.fail(t, started.ExecutionID, []string{"SmtpTimeout", "Timeout"}, "timed out")

		var class string
		var classes []string
		require.NoError(t, b.conn.QueryRow(b.ctx, `select last_error_class, error_classes
			from geneva.paused_workflows where workflow_id = $1`, id).Scan(&class, &classes))
		require.Equal(t, "SmtpTimeout", class)
		require.Equal(t, []string{"SmtpTimeout", "Timeout"}, classes)
	})

	t.Run("ListedOnceInOrder", func(t *testing.T) {
		// geneva.error_classes, the dashboard's suggestions: each class the
		// executions carry, once, in order, at most the limit, read as a
		// dashboard reads it (a member of geneva_reader)
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, "")
		for i, class := range []string{"Timeout", "BadCard", "Timeout", "Refused"} {
			id := b.create(t, "Failing", strconv.Itoa(i))
			b.fail(t, b.run(t, id).ExecutionID, []string{class}, "failed")
		}
		id := b.create(t, "Failing", "ok")
		b.complete(t, b.run(t, id).ExecutionID, "pause", nil) // no class

		classes := func(limit int) []string {
			var all []string
			for _, row := range viewRows[struct{ Class string }](t, b, "select geneva.error_classes($1)", limit) {
				all = append(all, row.Class)
			}
			return all
		}
		require.Equal(t, []string{"BadCard", "Refused", "Timeout"}, classes(100))
		require.Equal(t, []string{"BadCard", "Refused"}, classes(2))

		_, err := b.conn.Exec(b.ctx, "select geneva.error_classes(null)")
		requireCode(t, err, "22004")
		_, err = b.conn.Exec(b.ctx, "select geneva.error_classes(0)")
		requireCode(t, err, "22023")
	})

	t.Run("NoClassesWithoutAnError", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)
		b.complete(t, started.ExecutionID, "pause", nil)

		rows, err := b.conn.Query(b.ctx, `select error_classes from geneva.paused_workflows where workflow_id = $1`, id)
		require.NoError(t, err)
		classes, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[[]string])
		require.NoError(t, err)
		require.Nil(t, classes)
	})
}
