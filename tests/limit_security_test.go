package tests

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// TestOutsidersLocksStallNoClaim (README, "Security": advisory locks): a
// LOGIN role with no grant but the CONNECT every role has takes, on its own
// connection, every advisory lock it can name (those it reads in pg_locks
// while claims of the engine's limited steps are open, and, in one-key and
// two-key forms, those it can compute from the limits' keys and the queue's
// name) and holds them; claims and ends on other connections, under a
// statement_timeout, still start every step, limited or not, and every
// workflow finishes.
func TestOutsidersLocksStallNoClaim(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	_, err := b.conn.Exec(b.ctx, "select geneva.define_limit('api', p_concurrency => 2)")
	require.NoError(t, err)
	types := map[string]string{
		"Grouped": `{"concurrency": {"by": "group", "limit": 2}, "steps": [{"name": "a"}, {"name": "b"}]}`,
		"Typed":   `{"concurrency": {"by": "type", "limit": 3}, "steps": [{"name": "a"}, {"name": "b"}]}`,
		"Rated":   `{"rate_limit": {"by": "type", "limit": 100, "per": "1 minute"}, "steps": [{"name": "a"}, {"name": "b"}]}`,
		"Named":   `{"steps": [{"name": "a", "limits": ["api"]}, {"name": "b"}]}`,
		"Free":    `{"steps": [{"name": "a"}, {"name": "b"}]}`,
	}
	for name, definition := range types {
		b.define(t, name, definition)
	}
	var workflows []int64
	for i := range 4 {
		for name := range types {
			workflows = append(workflows, b.createIn(t, name, fmt.Sprint(i), "acme"))
		}
	}
	// the keys the limits give these workflows, as anyone can write them
	// (README: a key is a JSON array of kind, name and value)
	keys := []string{
		`["concurrency", "Grouped", "acme"]`, `["concurrency", "Typed", "Typed"]`,
		`["rate_limit", "Rated", "Rated"]`, `["limit", "api", ""]`,
	}

	outsider := newOutsider(t, b)
	var none int
	_, err = outsider.Exec(b.ctx, "select count(*) from geneva.step_executions")
	requireCode(t, err, "42501")

	// the advisory locks a claim of each limited type takes, read in
	// pg_locks while it is open
	observed := map[[3]int64]bool{}
	{
		s := b.session(t)
		setNowOn(t, s.conn, t0)
		tx, err := s.conn.Begin(b.ctx)
		require.NoError(t, err)
		for _, id := range workflows {
			execution := b.active(t, id)
			_, _, err := startStepOn(b.ctx, tx, execution.ID, nil)
			require.NoError(t, err)
		}
		rows, err := outsider.Query(b.ctx, `select classid::bigint, objid::bigint, objsubid::bigint
			from pg_locks where locktype = 'advisory' and pid = $1`, s.pid)
		require.NoError(t, err)
		var c, o, sub int64
		_, err = pgx.ForEachRow(rows, []any{&c, &o, &sub}, func() error {
			observed[[3]int64{c, o, sub}] = true
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, tx.Rollback(b.ctx))
	}

	// every lock it can name, held (session locks) until the test ends
	lock := func(query string, args ...any) {
		t.Helper()
		var got bool
		require.NoError(t, outsider.QueryRow(b.ctx, query, args...).Scan(&got), query)
		require.True(t, got, "the outsider takes %s %v", query, args)
	}
	for l := range observed {
		if l[2] == 2 { // the two-key form: (classid, objid) as signed integers
			lock("select pg_try_advisory_lock((($1::bigint + 2147483648) % 4294967296 - 2147483648)::integer, "+
				"(($2::bigint + 2147483648) % 4294967296 - 2147483648)::integer)", l[0], l[1])
		} else { // the one-key form: a bigint split in two
			lock("select pg_try_advisory_lock(($1::bigint << 32) | $2::bigint)", l[0], l[1])
		}
	}
	for _, key := range keys {
		lock("select pg_try_advisory_lock(hashtext($1))", key)
		lock("select pg_try_advisory_lock(hashtextextended($1, 0))", key)
		lock("select pg_try_advisory_lock(1195725890, hashtext($1))", key)
		for n := 1; n <= 8; n++ {
			lock("select pg_try_advisory_lock(hashtext($1), $2)", key, n)
		}
	}
	lock("select pg_try_advisory_lock(hashtextextended('geneva.notify:default', 0))")
	lock("select pg_try_advisory_lock(hashtext('default'))")

	// the worker's way, on another connection that fails rather than hang:
	// claim every due execution in one batch, end each one started
	worker := b.session(t)
	setNowOn(t, worker.conn, t0)
	_, err = worker.conn.Exec(b.ctx, "set statement_timeout = '5s'")
	require.NoError(t, err)
	deadline := time.Now().Add(60 * time.Second)
	for round := 0; ; round++ {
		var finished int
		require.NoError(t, worker.conn.QueryRow(b.ctx,
			"select count(*) from geneva.workflows where state = 'finished'").Scan(&finished))
		if finished == len(workflows) {
			break
		}
		require.Less(t, round, 50, "%d of %d workflows finished", finished, len(workflows))
		require.True(t, time.Now().Before(deadline), "%d of %d workflows finished", finished, len(workflows))
		var due []int64
		require.NoError(t, worker.conn.QueryRow(b.ctx, `select coalesce(array_agg(id order by id), '{}')
			from geneva.step_executions where state = 'scheduled' and limit_wait_key is null`).Scan(&due))
		var started []int64
		require.NoError(t, worker.conn.QueryRow(b.ctx, `select coalesce(array_agg(execution_id), '{}')
			from geneva.start_steps($1, array_fill(null::text, array[cardinality($1::bigint[])]))`, due).Scan(&started),
			"a claim of %d executions", len(due))
		require.NotEmpty(t, started, "round %d: none of %d due executions started", round, len(due))
		for _, id := range started {
			_, err := worker.conn.Exec(b.ctx, "select * from geneva.complete_step($1)", id)
			require.NoError(t, err, "the end of execution %d", id)
		}
	}
	require.NoError(t, outsider.QueryRow(b.ctx,
		"select count(*) from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()").Scan(&none))
	require.NotZero(t, none, "the outsider held its locks throughout")
}

// newOutsider creates a LOGIN role of the test's own with no grant (it has
// what PUBLIC has: CONNECT, and reading the catalogs), dropped when the test
// ends, and returns a connection to the test's database as it.
func newOutsider(t *testing.T, b *testBundle) *pgx.Conn {
	t.Helper()
	suffix := make([]byte, 4)
	_, err := rand.Read(suffix)
	require.NoError(t, err)
	role := "geneva_outsider_" + hex.EncodeToString(suffix)
	server, err := pgx.Connect(b.ctx, dbtest.ServerURL())
	require.NoError(t, err)
	defer server.Close(b.ctx)
	_, err = server.Exec(b.ctx, "create role "+pgx.Identifier{role}.Sanitize()+" login password 'outsider'")
	require.NoError(t, err)
	as := *b.conf
	as.User, as.Password = role, "outsider"
	conn, err := pgx.Connect(b.ctx, as.URL())
	require.NoError(t, err)
	// (cleanups run last added first: the connection closes, then the role goes)
	t.Cleanup(func() {
		ctx := context.Background()
		server, err := pgx.Connect(ctx, dbtest.ServerURL())
		if err != nil {
			t.Errorf("dropping role %s: %v", role, err)
			return
		}
		defer server.Close(ctx)
		if _, err := server.Exec(ctx, "drop role if exists "+pgx.Identifier{role}.Sanitize()); err != nil {
			t.Errorf("dropping role %s: %v", role, err)
		}
	})
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
