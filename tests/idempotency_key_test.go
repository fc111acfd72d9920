package tests

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stretchr/testify/require"
)

// createKeyed creates a ThreeSteps workflow for the hero with the key.
func (b *testBundle) createKeyed(t *testing.T, heroID, key string) int64 {
	t.Helper()
	var id int64
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select geneva.create_workflow('ThreeSteps', 'User', $1, p_allow_multiple => true, p_idempotency_key => $2)",
		heroID, key).Scan(&id))
	return id
}

func (b *testBundle) countWorkflows(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows").Scan(&n))
	return n
}

// TestIdempotencyKey: create_workflow's p_idempotency_key and the type's
// "idempotency_ttl".
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()

	t.Run("RepeatedKeyReturnsTheFirstWorkflowEndedOrNot", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		first := b.createKeyed(t, "1", "order-42")
		require.Equal(t, first, b.createKeyed(t, "1", "order-42"))
		// docs/security.md, by design: another hero's call with the key gets
		// the first workflow, of the first hero
		require.Equal(t, first, b.createKeyed(t, "other hero", "order-42"), "the key names the request")
		require.Equal(t, 1, b.countWorkflows(t))
		require.Len(t, b.executions(t, first), 1, "nothing scheduled again")

		b.call(t, "cancel_workflow", first)
		b.setNow(t, t0.Add(hours(23)))
		require.Equal(t, first, b.createKeyed(t, "1", "order-42"), "ended, within the TTL")

		// another key, another type's key space
		second := b.createKeyed(t, "1", "order-43")
		require.NotEqual(t, first, second)
		b.define(t, "Other", `{"steps": [{"name": "x"}]}`)
		var other int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('Other', 'User', '1', p_idempotency_key => 'order-42')").Scan(&other))
		require.NotEqual(t, first, other)
	})

	t.Run("AfterTheTTLTheKeyCreatesAgain", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "ThreeSteps", `{"steps": [{"name": "a"}], "idempotency_ttl": "1 hour"}`)
		first := b.createKeyed(t, "1", "k")
		b.setNow(t, t0.Add(hours(1)).Add(-time.Microsecond))
		require.Equal(t, first, b.createKeyed(t, "1", "k"))
		b.setNow(t, t0.Add(hours(1)))
		second := b.createKeyed(t, "1", "k")
		require.NotEqual(t, first, second)
		require.Equal(t, second, b.createKeyed(t, "1", "k"), "the key now names the second")

		// housekeeping deletes expired keys
		b.setNow(t, t0.Add(hours(3)))
		var keys []string
		rows, err := b.conn.Query(b.ctx, "select row(k.*)::text from geneva.idempotency_keys k")
		require.NoError(t, err)
		keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Len(t, keys, 1, "%v", keys)
		var deleted int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select (geneva.housekeep(p_keep_forever => true) ->> 'idempotency_keys_cleaned_up')::int").Scan(&deleted))
		require.Equal(t, 1, deleted)
	})

	t.Run("DefaultTTLIs24Hours", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		first := b.createKeyed(t, "1", "k")
		b.setNow(t, t0.Add(hours(24)))
		require.NotEqual(t, first, b.createKeyed(t, "1", "k"))
	})

	t.Run("ConcurrentCreatorsMakeOneWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		// the first holds its key uncommitted; the others wait for it
		holder := b.session(t)
		tx, err := holder.conn.Begin(b.ctx)
		require.NoError(t, err)
		var first int64
		require.NoError(t, tx.QueryRow(b.ctx,
			"select geneva.create_workflow('ThreeSteps', 'User', '1', p_idempotency_key => 'k')").Scan(&first))

		const racers = 8
		ids := make([]int64, racers)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			s := b.session(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.conn.QueryRow(context.Background(),
					"select geneva.create_workflow('ThreeSteps', 'User', '1', p_idempotency_key => 'k')").Scan(&ids[i])
			}()
			b.waitBlocked(t, s)
		}
		require.NoError(t, tx.Commit(b.ctx))
		wg.Wait()
		for i := range racers {
			require.NoError(t, errs[i])
			require.Equal(t, first, ids[i])
		}
		require.Equal(t, 1, b.countWorkflows(t))
	})

	t.Run("ARolledBackFirstLeavesTheKeyToTheNext", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		holder := b.session(t)
		tx, err := holder.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1', p_idempotency_key => 'k')")
		require.NoError(t, err)
		waiter := b.session(t)
		var id int64
		done := inBackground(func() error {
			return waiter.conn.QueryRow(context.Background(),
				"select geneva.create_workflow('ThreeSteps', 'User', '1', p_idempotency_key => 'k')").Scan(&id)
		})
		b.waitBlocked(t, waiter)
		require.NoError(t, tx.Rollback(b.ctx))
		require.NoError(t, receive(t, done))
		require.Equal(t, "ready", b.workflow(t, id).State)
		require.Equal(t, 1, b.countWorkflows(t))
	})

	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		_, err := b.conn.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1', p_idempotency_key => '')")
		requireCode(t, err, "22023")
		_, err = b.conn.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1', p_idempotency_key => repeat('k', 256))")
		requireCode(t, err, "22001")
		for _, ttl := range []string{`"soon"`, `-5`, `"200 years"`, `true`} {
			_, err = b.conn.Exec(b.ctx, "select geneva.define_workflow('T', $1::jsonb)", `{"steps": [], "idempotency_ttl": `+ttl+`}`)
			requireCode(t, err, "22023")
		}
		require.Equal(t, 0, b.countWorkflows(t))

		// a refused create (the hero's slot) leaves its key free
		b.create(t, "ThreeSteps", "1")
		_, err = b.conn.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1', p_idempotency_key => 'k')")
		requireCode(t, err, "23505")
		var keys int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.idempotency_keys").Scan(&keys))
		require.Zero(t, keys)
	})

	t.Run("KeysAreWrittenByCreateOnly", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		b.createKeyed(t, "1", "k")
		for _, statement := range []string{
			"insert into geneva.idempotency_keys values ('ThreeSteps', 'forged', 1, now(), now() + interval '1 day')",
			"update geneva.idempotency_keys set workflow_id = 99",
			"delete from geneva.idempotency_keys",
			"truncate geneva.idempotency_keys",
		} {
			_, err := b.conn.Exec(b.ctx, statement)
			requireCode(t, err, "55000")
		}
	})
}
