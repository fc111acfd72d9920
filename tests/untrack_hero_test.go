package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUntrackHero(t *testing.T) {
	t.Parallel()

	t.Run("StopsCanceling", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.heroUsers(t, 2)
		id := b.create(t, "ThreeSteps", "1")
		b.heroExec(t, "create table admins (id bigint primary key)")
		b.heroTrack(t, "admins", "User") // the same hero type on another table stays

		b.heroExec(t, "select geneva.untrack_hero('users', 'User')")
		b.heroExec(t, "select geneva.untrack_hero('users', 'User')")
		b.heroExec(t, "select geneva.untrack_hero('users', 'Never')")

		require.Empty(t, b.heroTriggers(t, "users"))
		require.Equal(t, []string{"geneva_hero_User"}, b.heroTriggers(t, "admins"))
		b.heroExec(t, "delete from users")
		require.Equal(t, "ready", b.workflow(t, id).State)
	})

	// One table may stand for several hero types, each with its trigger:
	// untracking one leaves the others.
	t.Run("LeavesOtherHeroTypesOfTheTable", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.heroUsers(t, 1)
		b.heroTrack(t, "users", "Member")
		user := b.create(t, "ThreeSteps", "1")
		member := b.heroCreate(t, "ThreeSteps", "Member", "1")

		b.heroExec(t, "select geneva.untrack_hero('users', 'User')")

		require.Equal(t, []string{"geneva_hero_Member"}, b.heroTriggers(t, "users"))
		b.heroExec(t, "delete from users")
		require.Equal(t, "ready", b.workflow(t, user).State)
		require.Equal(t, "canceled", b.workflow(t, member).State)
	})

	// Once untracked, deleting a hero stamps no performing workflow: its
	// next step starts as usual.
	t.Run("PerformingWorkflowGoesOnAfterItsHeroIsDeleted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := b.heroSetScene(t)
		b.heroExec(t, "select geneva.untrack_hero('users', 'User')")

		b.heroExec(t, "delete from users")

		var stamped bool
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select hero_missing_at is not null from geneva.workflows where id = $1", s.performing).Scan(&stamped))
		require.False(t, stamped)
		require.Equal(t, "ready", b.workflow(t, s.ready).State)
		require.Equal(t, "paused", b.workflow(t, s.paused).State)
		got := b.complete(t, s.running.ExecutionID, "success", nil)
		require.Equal(t, "ready", got.WorkflowState)
		b.setNow(t, t0) // years ahead: b is due
		started := b.run(t, s.performing)
		require.Equal(t, "b", started.StepName)
	})

	t.Run("RaisesForBadArguments", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.heroUsers(t, 1)

		for _, c := range []struct {
			sql  string
			code string
		}{
			{"select geneva.untrack_hero('no_such_table', 'User')", "42P01"},
			{"select geneva.untrack_hero(null, 'User')", "22004"},
			{"select geneva.untrack_hero('users', null)", "22004"},
		} {
			_, err := b.conn.Exec(b.ctx, c.sql)
			requireCode(t, err, c.code)
		}
		require.Equal(t, []string{"geneva_hero_User"}, b.heroTriggers(t, "users"), "nothing was removed")
	})
}
