package tests

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// TestHeroTrackingSecurity: geneva.track_hero and the trigger it attaches run
// as Geneva's owner. Nothing a caller defines may run with the owner's
// privileges through them, and no role may put the trigger (or its lock) on a
// table it could not put a trigger on itself.
func TestHeroTrackingSecurity(t *testing.T) {
	t.Parallel()

	// castToText is the attack: a type of the attacker's own, with a cast to
	// text whose function, were it ever run by the owner, would grant the
	// attacker every privilege on the engine's tables.
	const castToText = `
		create type pg_temp.evil as (id bigint);
		create function pg_temp.evil_text(pg_temp.evil) returns text language sql as $$
		  grant all on all tables in schema geneva to public;
		  select 'x'
		$$;
		create cast (pg_temp.evil as text) with function pg_temp.evil_text(pg_temp.evil) as assignment`

	// heroTable creates the operator's temp hero table with the id type, on
	// which Geneva's owner may attach triggers (were it a superuser, it
	// could anyway).
	heroTable := func(t *testing.T, b *testBundle, operator *pgx.Conn, idType string) {
		t.Helper()
		var owner string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select current_user").Scan(&owner))
		_, err := operator.Exec(b.ctx, "create temp table heroes (id "+idType+")")
		require.NoError(t, err)
		_, err = operator.Exec(b.ctx, "grant trigger on pg_temp.heroes to "+pgx.Identifier{owner}.Sanitize())
		require.NoError(t, err)
	}

	// granted reports whether anyone but the owner holds a privilege on
	// geneva.workflows.
	granted := func(t *testing.T, b *testBundle) bool {
		t.Helper()
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			select count(*)
			from pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
			where c.oid = 'geneva.workflows'::regclass and a.grantee <> c.relowner`).Scan(&n))
		return n > 0
	}

	t.Run("AnIdColumnOfTheCallersTypeIsRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		_, err := operator.Exec(b.ctx, castToText)
		require.NoError(t, err)
		heroTable(t, b, operator, "pg_temp.evil")

		_, err = operator.Exec(b.ctx, `select geneva.track_hero('pg_temp.heroes', 'User')`)
		requireCode(t, err, "22023")

		_, err = operator.Exec(b.ctx, `insert into pg_temp.heroes values (row(1))`)
		require.NoError(t, err)
		_, err = operator.Exec(b.ctx, `delete from pg_temp.heroes`)
		require.NoError(t, err)
		require.False(t, granted(t, b))
		_, err = operator.Exec(b.ctx, `delete from geneva.workflows`)
		requireCode(t, err, "42501")
	})

	t.Run("AnIdColumnWhoseTypeChangedAfterTrackingIsRefusedWhenTheTriggerFires", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		_, err := operator.Exec(b.ctx, castToText)
		require.NoError(t, err)
		heroTable(t, b, operator, "bigint")
		_, err = operator.Exec(b.ctx, `select geneva.track_hero('pg_temp.heroes', 'User')`)
		require.NoError(t, err, "a bigint id is a hero id")
		_, err = operator.Exec(b.ctx, `
			insert into pg_temp.heroes values (1);
			alter table pg_temp.heroes alter column id type pg_temp.evil using row(id)::pg_temp.evil`)
		require.NoError(t, err)
		id := b.create(t, "ThreeSteps", "1")

		_, err = operator.Exec(b.ctx, `delete from pg_temp.heroes`)
		requireCode(t, err, "22023")

		require.False(t, granted(t, b))
		require.Equal(t, "ready", b.workflow(t, id).State)
	})

	t.Run("ADomainIdColumnIsRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.heroExec(t, "create domain user_id as bigint check (value > 0)")
		b.heroExec(t, "create table users (id user_id primary key)")
		_, err := b.conn.Exec(b.ctx, "select geneva.track_hero('users', 'User')")
		requireCode(t, err, "22023")
		require.Empty(t, b.heroTriggers(t, "users"))
	})

	t.Run("BuiltInIdTypesAreHeroIds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		for i, typ := range []string{"smallint", "integer", "bigint", "numeric", "text", "varchar(20)", "char(3)"} {
			table := pgx.Identifier{"heroes_" + string(rune('a'+i))}.Sanitize()
			b.heroExec(t, "create table "+table+" (id "+typ+" primary key)")
			b.heroExec(t, "insert into "+table+" values ('42')")
			b.heroExec(t, "select geneva.track_hero($1, $2)", table, "Hero"+typ)
			id := b.heroCreate(t, "ThreeSteps", "Hero"+typ, "42")
			b.heroExec(t, "delete from "+table)
			require.Equal(t, "canceled", b.workflow(t, id).State, typ)
		}
	})

	t.Run("TrackingNeedsTheCallersTriggerPrivilege", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.heroExec(t, "create table users (id bigint primary key)")
		b.heroExec(t, "grant select, delete on users to "+pgx.Identifier{string(dbtest.Operator)}.Sanitize())
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)

		_, err := operator.Exec(b.ctx, "select geneva.track_hero('users', 'User')")
		requireCode(t, err, "42501")
		require.Empty(t, b.heroTriggers(t, "users"))

		b.heroTrack(t, "users", "User") // the table's owner may
		_, err = operator.Exec(b.ctx, "select geneva.untrack_hero('users', 'User')")
		requireCode(t, err, "42501")
		require.Equal(t, []string{"geneva_hero_User"}, b.heroTriggers(t, "users"))

		b.heroExec(t, "grant trigger on users to "+pgx.Identifier{string(dbtest.Operator)}.Sanitize())
		_, err = operator.Exec(b.ctx, "select geneva.untrack_hero('users', 'User')")
		require.NoError(t, err)
		_, err = operator.Exec(b.ctx, "select geneva.track_hero('users', 'User')")
		require.NoError(t, err)
		require.Equal(t, []string{"geneva_hero_User"}, b.heroTriggers(t, "users"))
	})
}
