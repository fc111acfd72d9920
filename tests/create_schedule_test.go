package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestCreateSchedule(t *testing.T) {
	t.Parallel()

	t.Run("CreatesWithItsNextSlot", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0.Add(10*time.Second))
		b.defineThreeSteps(t)
		var id int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_schedule('digest', '@hourly', 'ThreeSteps', 'User', '1')").Scan(&id))
		s := b.schedule(t, "digest")
		require.Equal(t, id, s.ID)
		require.Equal(t, "UTC", s.Timezone)
		require.Equal(t, "latest", s.CatchUp)
		require.False(t, s.AllowMultiple)
		require.False(t, s.Paused)
		require.Equal(t, s0.Add(time.Hour), s.NextFireAt.UTC())
		require.Nil(t, s.LastSlot)
		require.Nil(t, s.LastWorkflowID)
		require.Equal(t, s0.Add(10*time.Second), s.CreatedAt.UTC())
		require.NotEmpty(t, s.UpdatedBy)
		require.Zero(t, b.workflowCount(t), "creating a schedule creates no workflow")
	})

	t.Run("ReplacesByName", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		b.define(t, "Other", `{"steps": [{"name": "x"}]}`)
		id := b.createSchedule(t, "digest", "0 * * * *", "latest", false)
		_, err := b.conn.Exec(b.ctx, "select geneva.pause_schedule('digest')")
		require.NoError(t, err)

		b.setNow(t, s0.Add(time.Minute))
		require.Equal(t, id, b.createSchedule(t, "digest", "0 * * * *", "latest", false))
		require.Equal(t, s0, b.schedule(t, "digest").UpdatedAt.UTC(), "the same schedule again writes nothing")

		var again int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_schedule('digest', '0 * * * *', 'Other', 'Team', '7', 'UTC', 'all', true)").Scan(&again))
		require.Equal(t, id, again)
		s := b.schedule(t, "digest")
		require.Equal(t, []string{"Other", "Team", "7", "all"}, []string{s.WorkflowType, s.HeroType, s.HeroID, s.CatchUp})
		require.True(t, s.AllowMultiple)
		require.True(t, s.Paused, "replacing keeps it paused")
		require.Equal(t, s0.Add(time.Hour), s.NextFireAt.UTC(), "same cron and zone: the next slot is kept")
		require.Equal(t, s0.Add(time.Minute), s.UpdatedAt.UTC())

		b.setNow(t, s0.Add(2*time.Hour+time.Minute))
		require.Equal(t, id, b.createSchedule(t, "digest", "30 * * * *", "latest", false))
		require.Equal(t, s0.Add(2*time.Hour+30*time.Minute), b.schedule(t, "digest").NextFireAt.UTC(),
			"a new cron counts from now")
	})

	t.Run("CanonicalZone", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		_, err := b.conn.Exec(b.ctx, "select geneva.create_schedule('ny', '0 9 * * *', 'ThreeSteps', 'User', '1', 'america/new_york')")
		require.NoError(t, err)
		require.Equal(t, "America/New_York", b.schedule(t, "ny").Timezone)
	})

	t.Run("BadInputWritesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		long := strings.Repeat("x", 256)
		for code, calls := range map[string][]string{
			"22004": {
				"select geneva.create_schedule(null, '* * * * *', 'ThreeSteps', 'User', '1')",
				"select geneva.create_schedule('s', null, 'ThreeSteps', 'User', '1')",
				"select geneva.create_schedule('s', '* * * * *', null, 'User', '1')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', null, '1')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', null)",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '1', null)",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '1', 'UTC', null)",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '1', 'UTC', 'all', null)",
			},
			"22001": {
				"select geneva.create_schedule('" + long + "', '* * * * *', 'ThreeSteps', 'User', '1')",
				"select geneva.create_schedule('s', '* * * * *', '" + long + "', 'User', '1')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', '" + long + "', '1')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '" + strings.Repeat("x", 1025) + "')",
			},
			"22023": {
				"select geneva.create_schedule('', '* * * * *', 'ThreeSteps', 'User', '1')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', '', '1')",
				"select geneva.create_schedule('s', '61 * * * *', 'ThreeSteps', 'User', '1')",
				"select geneva.create_schedule('s', '* * * * * *', 'ThreeSteps', 'User', '1')",
				"select geneva.create_schedule('s', '0 0 30 2 *', 'ThreeSteps', 'User', '1')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '1', 'Mars/Olympus')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '1', 'PST')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '1', 'UTC+3')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '1', '')",
				"select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '1', 'UTC', 'sometimes')",
			},
			"WF001": {
				"select geneva.create_schedule('s', '* * * * *', 'Unknown', 'User', '1')",
			},
		} {
			for _, call := range calls {
				_, err := b.conn.Exec(b.ctx, call)
				requireCode(t, err, code)
			}
		}
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.schedule_list").Scan(&n))
		require.Zero(t, n)
	})

	t.Run("Roles", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		create := "select geneva.create_schedule('s', '* * * * *', 'ThreeSteps', 'User', '1')"
		for _, role := range []dbtest.Role{dbtest.App, dbtest.Worker, dbtest.Reader} {
			conn := dbtest.NewConnAs(t, b.conf, role)
			for _, call := range []string{
				create,
				"select geneva.pause_schedule('s')",
				"select geneva.resume_schedule('s')",
				"select geneva.delete_schedule('s')",
			} {
				_, err := conn.Exec(b.ctx, call)
				requireCode(t, err, "42501")
			}
		}
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		for _, call := range []string{
			create,
			"select geneva.pause_schedule('s')",
			"select geneva.resume_schedule('s')",
			"select geneva.fire_schedules()",
		} {
			_, err := operator.Exec(b.ctx, call)
			require.NoError(t, err, call)
		}
		for _, role := range []dbtest.Role{dbtest.App, dbtest.Reader} {
			conn := dbtest.NewConnAs(t, b.conf, role)
			_, err := conn.Exec(b.ctx, "select geneva.fire_schedules()")
			requireCode(t, err, "42501")
			_, err = conn.Exec(b.ctx, "select count(*) from geneva.schedule_list, geneva.schedule_firing_list")
			require.NoError(t, err)
		}
		worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
		_, err := worker.Exec(b.ctx, "select geneva.fire_schedules()")
		require.NoError(t, err)
		_, err = operator.Exec(b.ctx, "select geneva.delete_schedule('s')")
		require.NoError(t, err)
	})

	t.Run("GuardsRefuseHandWrittenChanges", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, s0)
		b.defineThreeSteps(t)
		b.createSchedule(t, "s", "* * * * *", "latest", false)
		b.setNow(t, s0.Add(time.Minute))
		require.Equal(t, 1, b.fire(t))
		for _, statement := range []string{
			"update geneva.schedules set next_fire_at = now()",
			"update geneva.schedules set paused_at = now()",
			"delete from geneva.schedules",
			"insert into geneva.schedules (name, cron, timezone, workflow_type, hero_type, hero_id, catch_up, next_fire_at, created_at, updated_at, updated_by) values ('x', '* * * * *', 'UTC', 'ThreeSteps', 'User', '1', 'all', now(), now(), now(), 'me')",
			"insert into geneva.schedule_firings (schedule_id, slot, fired_at, skipped_reason) select id, now(), now(), 'forged' from geneva.schedules",
			"update geneva.schedule_firings set skipped_reason = 'x', workflow_id = null",
			"delete from geneva.schedule_firings",
			"truncate geneva.schedule_firings",
			"truncate geneva.schedules cascade",
		} {
			_, err := b.conn.Exec(b.ctx, statement)
			requireCode(t, err, "55000")
		}
		require.Len(t, b.firings(t, "s"), 1)
		require.Equal(t, s0.Add(2*time.Minute), b.schedule(t, "s").NextFireAt.UTC())
	})
}
