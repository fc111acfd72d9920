package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// rowQueryer is a connection, a pool or a transaction.
type rowQueryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ifDue calls geneva.housekeep_if_due on db; nil when it ran no round.
func ifDue(ctx context.Context, db rowQueryer, args string) (*hkCounts, error) {
	var raw []byte
	if err := db.QueryRow(ctx, "select geneva.housekeep_if_due("+args+")::text").Scan(&raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, nil
	}
	var counts hkCounts
	if err := json.Unmarshal(raw, &counts); err != nil {
		return nil, err
	}
	return &counts, nil
}

func (b *testBundle) ifDue(t *testing.T, args string) *hkCounts {
	t.Helper()
	counts, err := ifDue(b.ctx, b.conn, args)
	require.NoError(t, err)
	return counts
}

// lastRoundAgo moves the last round's start into the past, as the owner
// with housekeep_if_due's permission (housekeeping_rounds_guard).
func (b *testBundle) lastRoundAgo(t *testing.T, ago string) {
	t.Helper()
	b.roundsByHand(t, "update geneva.housekeeping_rounds set last_run_at = now() - $1::interval", ago)
}

// roundsByHand writes geneva.housekeeping_rounds with housekeep_if_due's
// permission.
func (b *testBundle) roundsByHand(t *testing.T, sql string, args ...any) {
	t.Helper()
	tx, err := b.conn.Begin(b.ctx)
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, "select set_config('geneva.housekeeping_rounds', 'on', true)")
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, sql, args...)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(b.ctx))
}

func TestHousekeepIfDue(t *testing.T) {
	t.Parallel()

	t.Run("RunsOnlyWhenNoRoundRanWithinTheInterval", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "a"}]}`)

		require.NotNil(t, b.ifDue(t, "interval '1 minute'"), "never ran: due")
		require.Nil(t, b.ifDue(t, "interval '1 minute'"), "ran just now")

		// a step stuck now is recovered by the first round due after the
		// threshold, on whatever clock housekeep uses
		id := b.create(t, "One", "1")
		b.run(t, id)
		b.setNow(t, time.Now().Add(2*time.Hour))
		// (two hours on may be a new day, whose partition ahead the round
		// would create: made now, so that the round's result is the same at
		// any hour)
		_, err := b.conn.Exec(b.ctx, "select geneva._history_ahead(geneva.now())")
		require.NoError(t, err)
		require.Nil(t, b.ifDue(t, "interval '1 minute'"), "the fake clock does not make a round due")
		b.lastRoundAgo(t, "61 seconds")
		counts := b.ifDue(t, "interval '1 minute'")
		require.NotNil(t, counts)
		require.Equal(t, 1, counts.StuckInProgressRecovered)
		require.Equal(t, "recovered", deref(b.executions(t, id)[0].Outcome))

		// what the round did is kept
		var last []byte
		require.NoError(t, b.conn.QueryRow(b.ctx, "select last_result::text from geneva.housekeeping_rounds").Scan(&last))
		require.JSONEq(t, `{"workflows_cleaned_up": 0, "step_executions_cleaned_up": 0, "workflows_moved": 0,
			"partitions_created": 0, "partitions_dropped": 0, "partitions_detached": 0, "actions_cleaned_up": 0, "idempotency_keys_cleaned_up": 0,
			"stuck_in_progress_recovered": 1, "stuck_scheduled_recovered": 0, "orphans_repaired": 0, "runaways_flagged": 0, "more": false}`, string(last))

		require.NotNil(t, b.ifDue(t, "interval '0'"), "a zero interval is always due")
	})

	// Without an interval (NULL, as workers call it), a round is due after the
	// settings' round interval; one given still wins.
	t.Run("NullIsTheSettingsRoundInterval", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
		setRound := func(interval string) {
			t.Helper()
			_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_round_interval => $1::interval)", interval)
			require.NoError(t, err)
		}

		require.NotNil(t, b.ifDue(t, ""), "never ran: due")
		require.Nil(t, b.ifDue(t, ""), "ran within the default minute")

		setRound("1 hour")
		b.lastRoundAgo(t, "2 minutes")
		require.Nil(t, b.ifDue(t, ""), "ran within the setting's hour")
		counts, err := ifDue(b.ctx, worker, "null")
		require.NoError(t, err)
		require.Nil(t, counts, "a worker's call too")
		require.NotNil(t, b.ifDue(t, "interval '1 minute'"), "a given interval wins")
		require.Nil(t, b.ifDue(t, ""))

		setRound("0")
		require.NotNil(t, b.ifDue(t, ""), "a zero setting is always due")
		counts, err = ifDue(b.ctx, worker, "")
		require.NoError(t, err)
		require.NotNil(t, counts, "and again")
	})

	t.Run("MoreToDoKeepsTheNextRoundDue", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "a"}]}`)
		for i := range 3 {
			b.run(t, b.create(t, "One", fmt.Sprint(i)))
		}
		b.setNow(t, time.Now().Add(2*time.Hour))

		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_batch_size => 2)")
		require.NoError(t, err)
		args := "interval '1 hour'"
		first := b.ifDue(t, args)
		require.NotNil(t, first)
		require.Equal(t, 2, first.StuckInProgressRecovered)
		require.True(t, first.More)
		second := b.ifDue(t, args)
		require.NotNil(t, second, "a full batch leaves the next round due at once")
		require.Equal(t, 1, second.StuckInProgressRecovered)
		require.False(t, second.More)
		require.Nil(t, b.ifDue(t, args))
	})

	t.Run("ARoundInProgressIsSkippedNotWaitedFor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tx, err := b.pool.Begin(b.ctx)
		require.NoError(t, err)
		defer tx.Rollback(b.ctx) //nolint:errcheck
		running, err := ifDue(b.ctx, tx, "interval '1 minute'")
		require.NoError(t, err)
		require.NotNil(t, running, "the first caller runs a round and holds it")

		// another caller, even with a zero interval, neither waits nor runs one
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		other, err := ifDue(ctx, b.conn, "interval '0'")
		require.NoError(t, err, "it does not wait for the running round")
		require.Nil(t, other)

		require.NoError(t, tx.Commit(b.ctx))
		require.Nil(t, b.ifDue(t, "interval '1 minute'"), "and after it the next is not due yet")
	})

	t.Run("ConcurrentCallersRunOneRound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const callers = 12
		conns := make([]*pgx.Conn, callers)
		for i := range conns {
			conns[i] = dbtest.NewConn(t, b.conf)
		}
		for round := range 5 {
			b.lastRoundAgo(t, "1 day")
			var (
				wg    sync.WaitGroup
				mu    sync.Mutex
				ran   int
				start = make(chan struct{})
			)
			for _, conn := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					counts, err := ifDue(b.ctx, conn, "interval '1 hour'")
					if err != nil {
						t.Error(err)
						return
					}
					if counts != nil {
						mu.Lock()
						ran++
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			require.Equal(t, 1, ran, "round %d: exactly one caller ran it", round)
		}
	})

	t.Run("Arguments", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := ifDue(b.ctx, b.conn, "interval '-1 second'")
		requireCode(t, err, "22023")
		_, err = ifDue(b.ctx, b.conn, "interval '1001 years'")
		requireCode(t, err, "22023")
		// the thresholds are the settings', not the caller's
		_, err = ifDue(b.ctx, b.conn, "interval '0', p_recovery_action => 'cancel'")
		requireCode(t, err, "42883")
		_, err = ifDue(b.ctx, b.conn, "interval '0', p_retention => interval '0'")
		requireCode(t, err, "42883")

		// a deleted row comes back
		b.roundsByHand(t, "delete from geneva.housekeeping_rounds")
		require.NotNil(t, b.ifDue(t, "interval '1 minute'"))
		require.Nil(t, b.ifDue(t, "interval '1 minute'"))
	})
}

// housekeep_if_due, which workers call, takes an interval and nothing else:
// no overload of it takes a threshold (an upgrade dropped the old one).
func TestHousekeepIfDueTakesOnlyAnInterval(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rows, err := b.conn.Query(b.ctx, `
		select pg_get_function_identity_arguments(p.oid)
		from pg_proc p
		where p.pronamespace = 'geneva'::regnamespace and p.proname = 'housekeep_if_due'`)
	require.NoError(t, err)
	signatures, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"p_interval interval"}, signatures)
}
