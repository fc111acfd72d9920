package tests

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// keyedSend sends approved with a key over conn and returns what send_event
// returned.
func (b *testBundle) keyedSend(conn rowQueryer, workflowID int64, key string) (bool, error) {
	var sent bool
	err := conn.QueryRow(context.Background(),
		"select geneva.send_event($1, 'approved', '{}', p_key => $2)", workflowID, key).Scan(&sent)
	return sent, err
}

func (b *testBundle) eventKeys(t *testing.T, workflowID int64) []string {
	t.Helper()
	var keys []string
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select coalesce(array_agg(coalesce(key, '-') order by id), '{}') from geneva.events where workflow_id = $1",
		workflowID).Scan(&keys))
	return keys
}

// TestEventKeys: send_event's and send_hero_event's p_key (issue 49, item 1).
func TestEventKeys(t *testing.T) {
	t.Parallel()

	t.Run("AKeyTheWorkflowHasRecordsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		b.defineThreeSteps(t)
		id, decide := b.toDecide(t, "1")
		other := b.create(t, "ThreeSteps", "1")
		before := b.lastActionID(t)

		sent, err := b.keyedSend(b.conn, id, "delivery-1")
		require.NoError(t, err)
		require.True(t, sent)
		// the step consumes it; the key stays the workflow's
		b.setNow(t, t0.Add(2*time.Hour))
		started := b.run(t, id)
		require.Equal(t, decide.ID, started.ExecutionID)
		sent, err = b.keyedSend(b.conn, id, "delivery-1")
		require.NoError(t, err)
		require.False(t, sent, "a delivery repeated after its event was consumed")
		sent, err = b.keyedSend(b.conn, id, "delivery-2")
		require.NoError(t, err)
		require.True(t, sent, "another key")
		require.True(t, b.sendEvent(t, id, "approved", nil), "no key, no check")
		require.True(t, b.sendEvent(t, id, "approved", nil))
		sent, err = b.keyedSend(b.conn, other, "delivery-1")
		require.NoError(t, err)
		require.True(t, sent, "keys are each workflow's own")
		require.Equal(t, []string{"delivery-1", "delivery-2", "-", "-"}, b.eventKeys(t, id))

		logged := b.actions(t, before)
		require.Len(t, logged, 6)
		require.JSONEq(t, `{"event": "approved", "key": "delivery-1"}`, string(logged[1].Arguments))
		require.JSONEq(t, `{"sent": false, "duplicate": true}`, string(logged[1].Result))
		require.JSONEq(t, `{"event": "approved"}`, string(logged[3].Arguments))
	})

	t.Run("ADeliveryRepeatedConcurrentlyIsOneEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineExpense(t, "run")
		id := b.create(t, "Expense", "1")

		// the first delivery holds its event uncommitted; the other two wait
		holder := b.session(t)
		tx, err := holder.conn.Begin(b.ctx)
		require.NoError(t, err)
		first, err := b.keyedSend(tx, id, "webhook-7")
		require.NoError(t, err)
		require.True(t, first)
		results := make([]bool, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range results {
			s := b.session(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = b.keyedSend(s.conn, id, "webhook-7")
			}()
			b.waitBlocked(t, s)
		}
		require.NoError(t, tx.Commit(b.ctx))
		wg.Wait()
		for i := range results {
			require.NoError(t, errs[i])
			require.False(t, results[i])
		}
		require.Len(t, b.events(t, id), 1)
	})

	t.Run("ARolledBackDeliveryLeavesTheKeyToTheNext", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineExpense(t, "run")
		id := b.create(t, "Expense", "1")
		holder := b.session(t)
		tx, err := holder.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = b.keyedSend(tx, id, "k")
		require.NoError(t, err)
		waiter := b.session(t)
		var sent bool
		done := inBackground(func() error {
			var err error
			sent, err = b.keyedSend(waiter.conn, id, "k")
			return err
		})
		b.waitBlocked(t, waiter)
		require.NoError(t, tx.Rollback(b.ctx))
		require.NoError(t, receive(t, done))
		require.True(t, sent)
		require.Equal(t, []string{"k"}, b.eventKeys(t, id))
	})

	t.Run("HeroEventsCountTheWorkflowsThatRecordedIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineExpense(t, "run")
		b.defineThreeSteps(t)
		expense := b.create(t, "Expense", "7")
		three := b.create(t, "ThreeSteps", "7")
		sent, err := b.keyedSend(b.conn, expense, "d-1")
		require.NoError(t, err)
		require.True(t, sent)

		var reached int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.send_hero_event('User', '7', 'approved', p_key => 'd-1')").Scan(&reached))
		require.Equal(t, 1, reached, "the workflow that had the key is not counted")
		require.Equal(t, []string{"d-1"}, b.eventKeys(t, expense))
		require.Equal(t, []string{"d-1"}, b.eventKeys(t, three))
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.send_hero_event('User', '7', 'approved', p_key => 'd-1')").Scan(&reached))
		require.Zero(t, reached)
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.send_hero_event('User', '7', 'approved', p_key => 'd-2')").Scan(&reached))
		require.Equal(t, 2, reached)
	})

	t.Run("BadKeysWriteNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineExpense(t, "run")
		id := b.create(t, "Expense", "1")
		for statement, code := range map[string]string{
			"select geneva.send_event($1, 'approved', p_key => repeat('k', 256))":               "22001",
			"select geneva.send_event($1, 'approved', p_key => repeat('é', 128))":               "22001",
			"select geneva.send_event($1, 'approved', p_key => '')":                             "22023",
			"select geneva.send_hero_event('User', '1', 'approved', p_key => repeat('k', 256))": "22001",
			"select geneva.send_hero_event('User', '1', 'approved', p_key => '')":               "22023",
		} {
			args := []any{}
			if strings.Contains(statement, "$1") {
				args = append(args, id)
			}
			_, err := b.conn.Exec(b.ctx, statement, args...)
			requireCode(t, err, code)
		}
		require.Empty(t, b.events(t, id))
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.action_log where verb <> 'define_workflow'").Scan(&n))
		require.Zero(t, n, "nothing logged")
		sent, err := b.keyedSend(b.conn, id, strings.Repeat("k", 255))
		require.NoError(t, err)
		require.True(t, sent, "255 bytes are fine")
	})
}
