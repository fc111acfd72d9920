package tests

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// archivedPartition is a row of geneva.archive_partitions.
type archivedPartition struct {
	PartitionName string
	LowerDay      time.Time
	UpperDay      time.Time
	Attached      bool
	Workflows     int64
}

func (b *testBundle) archivePartitions(t *testing.T, db queryer, before string) []archivedPartition {
	t.Helper()
	rows, err := db.Query(b.ctx, "select * from geneva.archive_partitions($1::date)", before)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[archivedPartition])
	require.NoError(t, err)
	return all
}

// archiveFixture moves historyFixture's workflows into history (ended on
// 2030-01-01, UTC) and sets the clock 40 days on: with the default retention
// of 30 days, history before 2030-01-11 has expired. It returns the ids
// and the partition's name.
func archiveFixture(t *testing.T, b *testBundle) ([]int64, string) {
	t.Helper()
	ids := historyFixture(t, b)
	b.moveToHistory(t, ids...)
	b.setNow(t, t0.Add(40*24*time.Hour))
	var name string
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select partition_name from geneva._history_bounds('workflows_history') where lower_day = (select ended_on from geneva.workflows_history limit 1)").Scan(&name))
	return ids, name
}

// detachByHand detaches a partition's three tables as housekeeping's
// retention does with archive = 'detach'.
func (b *testBundle) detachByHand(t *testing.T, name string) {
	t.Helper()
	suffix := name[len("workflows_history_"):]
	for _, table := range []string{"events_history", "step_executions_history", "workflows_history"} {
		_, err := b.conn.Exec(b.ctx, "alter table geneva."+table+" detach partition geneva."+table+"_"+suffix)
		require.NoError(t, err)
	}
}

func TestArchivePartitions(t *testing.T) {
	t.Parallel()

	// Partitions whose range ends on or before the date, attached or
	// detached, with their workflows; none younger.
	t.Run("ListsExpiredPartitions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids, name := archiveFixture(t, b)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		setNowOn(t, operator, t0.Add(40*24*time.Hour))

		require.Empty(t, b.archivePartitions(t, operator, "2030-01-01"))
		got := b.archivePartitions(t, operator, "2030-01-02")
		require.Len(t, got, 1)
		require.Equal(t, name, got[0].PartitionName)
		require.Equal(t, "2030-01-01", got[0].LowerDay.Format(time.DateOnly))
		require.Equal(t, "2030-01-02", got[0].UpperDay.Format(time.DateOnly))
		require.True(t, got[0].Attached)
		require.Equal(t, int64(len(ids)), got[0].Workflows)

		// detached by retention (archive = 'detach'): still listed, its
		// range read from its rows
		b.detachByHand(t, name)
		got = b.archivePartitions(t, operator, "2030-01-11")
		require.Len(t, got, 1)
		require.Equal(t, name, got[0].PartitionName)
		require.Equal(t, "2030-01-02", got[0].UpperDay.Format(time.DateOnly))
		require.False(t, got[0].Attached)
	})

	// History retention still keeps is not archived: a date after the
	// horizon (now - retention) is refused, and so is any date when the
	// retention keeps ended workflows for ever.
	t.Run("RefusesADateRetentionKeeps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		archiveFixture(t, b)
		_, err := b.conn.Exec(b.ctx, "select * from geneva.archive_partitions('2030-01-12')")
		requireCode(t, err, "22023")
		_, err = b.conn.Exec(b.ctx, "select * from geneva.archive_partitions(null)")
		requireCode(t, err, "22004")
		_, err = b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_keep_forever => true)")
		require.NoError(t, err)
		_, err = b.conn.Exec(b.ctx, "select * from geneva.archive_partitions('2030-01-02')")
		requireCode(t, err, "22023")
	})

	// Operators archive; applications and readers may not.
	t.Run("OperatorsOnly", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		archiveFixture(t, b)
		for _, role := range []dbtest.Role{dbtest.App, dbtest.Reader, dbtest.Worker} {
			conn := dbtest.NewConnAs(t, b.conf, role)
			for _, sql := range []string{
				"select * from geneva.archive_partitions('2030-01-02')",
				"select * from geneva.archive_partition_rows('workflows_history_20300101')",
				"select geneva.drop_archived_partition('workflows_history_20300101', 5)",
			} {
				_, err := conn.Exec(b.ctx, sql)
				requireCode(t, err, "42501")
			}
		}
	})
}
