package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOutsidersLocksStallNoPartition (docs/security.md: Geneva takes no
// advisory lock): a LOGIN role with nothing but CONNECT holds the advisory
// lock history's partition creation once took, and cannot lock the row it
// takes now (geneva.housekeeping_settings'); a housekeeping round on another
// connection, under a statement_timeout, still creates the day's partitions
// and the next two.
func TestOutsidersLocksStallNoPartition(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0) // a day with no partition yet

	outsider := newOutsider(t, b)
	var held bool
	require.NoError(t, outsider.QueryRow(b.ctx,
		"select pg_try_advisory_lock(hashtext('geneva._history_partition'))").Scan(&held))
	require.True(t, held)
	tx, err := outsider.Begin(b.ctx)
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, "select from geneva.housekeeping_settings for update")
	requireCode(t, err, "42501")
	require.NoError(t, tx.Rollback(b.ctx))

	round := b.session(t)
	setNowOn(t, round.conn, t0)
	_, err = round.conn.Exec(b.ctx, "set statement_timeout = '5s'")
	require.NoError(t, err)
	var created int
	require.NoError(t, round.conn.QueryRow(b.ctx,
		"select (geneva.housekeep() ->> 'partitions_created')::int").Scan(&created))
	require.Equal(t, 3, created, "today's and the next two days'")
}
