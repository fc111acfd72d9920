package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// partitionTables counts the tables of a partition's suffix in schema geneva.
func (b *testBundle) partitionTables(t *testing.T, name string) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select count(*) from pg_class c join pg_namespace s on s.oid = c.relnamespace
		where s.nspname = 'geneva' and c.relname in ('workflows_history_' || $1, 'step_executions_history_' || $1, 'events_history_' || $1)`,
		name[len("workflows_history_"):]).Scan(&n))
	return n
}

func (b *testBundle) endedCounts(t *testing.T) int64 {
	t.Helper()
	var n int64
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select coalesce(sum(workflows), 0) from geneva.workflow_counts where state in ('finished', 'canceled')").Scan(&n))
	return n
}

func TestDropArchivedPartition(t *testing.T) {
	t.Parallel()

	// Detached and dropped, with its executions' and events'; its workflows
	// leave workflow_counts; the action is logged; again: false.
	t.Run("DropsAnAttachedPartition", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids, name := archiveFixture(t, b)
		require.Equal(t, 3, b.partitionTables(t, name))
		require.Equal(t, int64(len(ids)), b.endedCounts(t))

		var dropped bool
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.drop_archived_partition($1, $2)", name, len(ids)).Scan(&dropped))
		require.True(t, dropped)
		require.Zero(t, b.partitionTables(t, name))
		require.Zero(t, b.endedCounts(t))
		_, err := b.conn.Exec(b.ctx, "select geneva.get_workflow($1)", ids[0])
		requireCode(t, err, "P0002")
		var verb, result string
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select verb, result::text from geneva.action_log order by action_id desc limit 1").Scan(&verb, &result))
		require.Equal(t, "archive", verb)
		require.Contains(t, result, `"attached": true`)

		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.drop_archived_partition($1, $2)", name, len(ids)).Scan(&dropped))
		require.False(t, dropped)
	})

	// A partition detached by housekeeping's retention (which took its
	// workflows off the counts then) is dropped as it is.
	t.Run("DropsADetachedPartition", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids, name := archiveFixture(t, b)
		b.detachByHand(t, name)
		var dropped bool
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.drop_archived_partition($1, $2)", name, len(ids)).Scan(&dropped))
		require.True(t, dropped)
		require.Zero(t, b.partitionTables(t, name))
	})

	// A reader of history (another connection, its transaction open after
	// reading a moved workflow's timeline) holds the history tables: the
	// drop does not wait for it (nor queue readers behind it, nor meet one
	// in a deadlock) but fails at once with 55P03, dropping nothing; once
	// the reader is done, the same call drops it. Both for an attached
	// partition (its parents) and a detached one (its own tables).
	t.Run("FailsFastWhileReadersHoldHistory", func(t *testing.T) {
		t.Parallel()
		for _, detached := range []bool{false, true} {
			b := setup(t)
			ids, name := archiveFixture(t, b)
			if detached {
				b.detachByHand(t, name)
			}
			reader := b.session(t)
			tx, err := reader.conn.Begin(b.ctx)
			require.NoError(t, err)
			sql := "select count(*) from geneva.workflow_timeline where workflow_id = $1"
			if detached {
				sql = "select count(*) from geneva." + name + " where id = $1"
			}
			var n int
			require.NoError(t, tx.QueryRow(b.ctx, sql, ids[0]).Scan(&n))
			require.NotZero(t, n)

			done := inBackground(func() error {
				_, err := b.conn.Exec(b.ctx, "select geneva.drop_archived_partition($1, $2)", name, len(ids))
				return err
			})
			select {
			case err := <-done:
				pgErr := requireCode(t, err, "55P03")
				require.Contains(t, pgErr.Message, "try again")
			case <-time.After(10 * time.Second):
				t.Fatal("drop_archived_partition waited for the reader")
			}
			require.Equal(t, 3, b.partitionTables(t, name), "nothing dropped")
			if !detached {
				require.Equal(t, int64(len(ids)), b.endedCounts(t), "the counts untouched")
			}

			require.NoError(t, tx.Commit(b.ctx))
			var dropped bool
			require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.drop_archived_partition($1, $2)", name, len(ids)).Scan(&dropped))
			require.True(t, dropped)
			require.Zero(t, b.partitionTables(t, name))
		}
	})

	// Another number of workflows than the archive wrote: nothing dropped.
	// Younger than the retention: refused.
	t.Run("RefusesWhatNoFileHolds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids, name := archiveFixture(t, b)
		_, err := b.conn.Exec(b.ctx, "select geneva.drop_archived_partition($1, $2)", name, len(ids)-1)
		requireCode(t, err, "55000")
		require.Equal(t, 3, b.partitionTables(t, name))
		_, err = b.conn.Exec(b.ctx, "select geneva.drop_archived_partition($1, null)", name)
		requireCode(t, err, "22004")
		_, err = b.conn.Exec(b.ctx, "select geneva.drop_archived_partition('nope', 1)")
		requireCode(t, err, "22023")

		b.setNow(t, t0.Add(48*time.Hour)) // two days after: retention keeps it
		_, err = b.conn.Exec(b.ctx, "select geneva.drop_archived_partition($1, $2)", name, len(ids))
		requireCode(t, err, "22023")
		require.Equal(t, 3, b.partitionTables(t, name))
	})
}
