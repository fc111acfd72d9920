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
