package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDeleteSchedule(t *testing.T) {
	t.Parallel()

	t.Run("DeletesItAndItsFiringsNotItsWorkflows", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		b.createSchedule(t, "s", "* * * * *", "latest", true)
		b.setNow(t, s0.Add(time.Minute))
		require.Equal(t, 1, b.fire(t))
		var name string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select name from geneva.delete_schedule('s')").Scan(&name))
		require.Equal(t, "s", name)
		var schedules, firings int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select (select count(*) from geneva.schedules), (select count(*) from geneva.schedule_firings)").Scan(&schedules, &firings))
		require.Zero(t, schedules)
		require.Zero(t, firings)
		require.Equal(t, 1, b.workflowCount(t))
		b.setNow(t, s0.Add(time.Hour))
		require.Zero(t, b.fire(t))

		_, err := b.conn.Exec(b.ctx, "select geneva.delete_schedule('s')")
		requireCode(t, err, "P0002")
	})

	t.Run("Null", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.conn.Exec(b.ctx, "select geneva.delete_schedule(null)")
		requireCode(t, err, "22004")
	})
}
