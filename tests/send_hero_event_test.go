package tests

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestSendHeroEvent(t *testing.T) {
	t.Parallel()

	t.Run("ReachesEveryOngoingWorkflowOfTheHero", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		b.defineThreeSteps(t)
		awaiting, decide := b.toDecide(t, "7")
		other := b.create(t, "ThreeSteps", "7")
		var ended int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('Expense', 'User', '7', true)").Scan(&ended))
		b.call(t, "cancel_workflow", ended)
		stranger := b.create(t, "ThreeSteps", "8")

		b.setNow(t, t0.Add(2*time.Hour))
		var reached int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			`select geneva.send_hero_event('User', '7', 'approved', '{"amount": 12}')`).Scan(&reached))
		require.Equal(t, 2, reached, "the two ongoing workflows of User 7")

		require.Len(t, b.events(t, awaiting), 1)
		require.Len(t, b.events(t, other), 1, "kept for a later step that awaits it")
		require.Empty(t, b.events(t, ended))
		require.Empty(t, b.events(t, stranger))
		require.Equal(t, t0.Add(2*time.Hour), b.execution(t, decide.ID).ScheduledFor, "the awaiting step is due now")

		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.send_hero_event('User', 'nobody', 'approved')").Scan(&reached))
		require.Zero(t, reached)
	})

	t.Run("FromATriggerItCommitsAndRollsBackWithTheRow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		id, decide := b.toDecide(t, "42")
		// docs/events.md's recipe ("From the application's transaction")
		_, err := b.conn.Exec(b.ctx, `
			create table approvals (expense_id text primary key, approved_by text not null);
			create function approvals_notify() returns trigger
			language plpgsql as $$
			begin
			  perform geneva.send_hero_event('User', new.expense_id, 'approved',
			    jsonb_build_object('approved_by', new.approved_by));
			  return new;
			end;
			$$;
			create trigger approvals_notify after insert on approvals
			for each row execute function approvals_notify();`)
		require.NoError(t, err)
		b.setNow(t, t0.Add(2*time.Hour))

		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "insert into approvals values ('42', 'ann')")
		require.NoError(t, err)
		require.NoError(t, tx.Rollback(b.ctx))
		require.Empty(t, b.events(t, id), "rolled back with the row")
		require.Equal(t, t0.Add(49*time.Hour), b.execution(t, decide.ID).ScheduledFor)
		event, _ := b.awaiting(t, id)
		require.Equal(t, "approved", event)

		_, err = b.conn.Exec(b.ctx, "insert into approvals values ('42', 'bob')")
		require.NoError(t, err)
		events := b.events(t, id)
		require.Len(t, events, 1)
		require.JSONEq(t, `{"approved_by": "bob"}`, string(events[0].Payload))
		started := b.run(t, id)
		require.Equal(t, events[0].ID, deref(started.EventID))
	})

	t.Run("BadInputWritesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineExpense(t, "run")
		id := b.create(t, "Expense", "1")
		for statement, code := range map[string]string{
			"select geneva.send_hero_event(null, '1', 'approved')":                                         "22004",
			"select geneva.send_hero_event('User', null, 'approved')":                                      "22004",
			"select geneva.send_hero_event('User', '1', null)":                                             "22004",
			"select geneva.send_hero_event('User', '1', '')":                                               "22023",
			"select geneva.send_hero_event('User', '1', repeat('é', 128))":                                 "22001",
			"select geneva.send_hero_event('User', '1', 'a', to_jsonb(repeat('x', 1048577)))":              "22001",
			"select geneva.send_hero_event('User', '1', 'a', (repeat('[', 65) || repeat(']', 65))::jsonb)": "22023",
			// the hero is bounded as create_workflow's (issue 44, item 8)
			"select geneva.send_hero_event(repeat('x', 10000000), '1', 'a')": "22001",
			"select geneva.send_hero_event(repeat('x', 256), '1', 'a')":      "22001",
			"select geneva.send_hero_event('User', repeat('x', 1025), 'a')":  "22001",
			"select geneva.send_hero_event('', '1', 'a')":                    "22023",
			"select geneva.send_hero_event('User', '', 'a')":                 "22023",
		} {
			_, err := b.conn.Exec(b.ctx, statement)
			requireCode(t, err, code)
		}
		require.Empty(t, b.events(t, id))
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.action_log where verb <> 'define_workflow'").Scan(&n))
		require.Zero(t, n, "nothing logged")
	})
}

// defineOrder defines "Order": pay awaits "paid" for a day, then ship.
func (b *testBundle) defineOrder(t *testing.T) {
	t.Helper()
	b.define(t, "Order", `{"steps": [
		{"name": "pay", "await": {"event": "paid", "timeout": "1 day"}},
		{"name": "ship"}
	]}`)
}

// heroSend calls send_hero_event on conn for User heroID with the named
// arguments given (", p_key => ..."), returning how many it reached.
func heroSend(conn rowQueryer, heroID, event, named string) (int, error) {
	var reached int
	err := conn.QueryRow(context.Background(),
		"select geneva.send_hero_event('User', $1, $2, '{\"amount\": 12}'"+named+")", heroID, event).Scan(&reached)
	return reached, err
}

// workflowsOf returns the ids of the hero's workflows of the type, ended or
// not, in order.
func (b *testBundle) workflowsOf(t *testing.T, workflowType, heroID string) []int64 {
	t.Helper()
	var ids []int64
	require.NoError(t, b.conn.QueryRow(b.ctx, `select coalesce(array_agg(id order by id), '{}') from geneva.workflows
		where workflow_type = $1 and hero_type = 'User' and hero_id = $2`, workflowType, heroID).Scan(&ids))
	return ids
}

// TestStartOnEvent: send_hero_event's p_start (issue 49, item 5).
func TestStartOnEvent(t *testing.T) {
	t.Parallel()

	t.Run("NoneOngoingStartsOneThatReceivesTheEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineOrder(t)
		b.defineThreeSteps(t)
		other := b.create(t, "ThreeSteps", "9")
		before := b.lastActionID(t)

		reached, err := heroSend(b.conn, "9", "paid", ", p_start => 'Order'")
		require.NoError(t, err)
		require.Equal(t, 2, reached, "the hero's other workflow, and the one started")
		orders := b.workflowsOf(t, "Order", "9")
		require.Len(t, orders, 1)
		require.Equal(t, "ready", b.workflow(t, orders[0]).State)
		events := b.events(t, orders[0])
		require.Len(t, events, 1)
		require.JSONEq(t, `{"amount": 12}`, string(events[0].Payload))
		require.Len(t, b.events(t, other), 1)
		pay := b.active(t, orders[0])
		require.Equal(t, t0, pay.ScheduledFor, "its first step, which awaits the event, is due at once")
		started := b.run(t, orders[0])
		require.Equal(t, events[0].ID, deref(started.EventID))

		logged := b.actions(t, before)
		require.Len(t, logged, 1)
		require.JSONEq(t, `{"hero_type": "User", "hero_id": "9", "event": "paid", "start": "Order"}`, string(logged[0].Arguments))
		require.JSONEq(t, `{"reached": 2, "started": `+jsonInt(orders[0])+`}`, string(logged[0].Result))

		// one ongoing: it gets the next event, and none is started
		reached, err = heroSend(b.conn, "9", "paid", ", p_start => 'Order'")
		require.NoError(t, err)
		require.Equal(t, 2, reached)
		require.Equal(t, orders, b.workflowsOf(t, "Order", "9"))
		require.Len(t, b.events(t, orders[0]), 2)
	})

	t.Run("AKeyStartsOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineOrder(t)
		reached, err := heroSend(b.conn, "9", "paid", ", p_key => 'w-1', p_start => 'Order'")
		require.NoError(t, err)
		require.Equal(t, 1, reached)
		reached, err = heroSend(b.conn, "9", "paid", ", p_key => 'w-1', p_start => 'Order'")
		require.NoError(t, err)
		require.Zero(t, reached, "repeated: nothing recorded")
		orders := b.workflowsOf(t, "Order", "9")
		require.Len(t, orders, 1)

		// the first one ended: a repeated delivery starts no second one,
		// a new one does
		b.call(t, "cancel_workflow", orders[0])
		reached, err = heroSend(b.conn, "9", "paid", ", p_key => 'w-1', p_start => 'Order'")
		require.NoError(t, err)
		require.Zero(t, reached)
		require.Len(t, b.workflowsOf(t, "Order", "9"), 1)
		reached, err = heroSend(b.conn, "9", "paid", ", p_key => 'w-2', p_start => 'Order'")
		require.NoError(t, err)
		require.Equal(t, 1, reached)
		require.Len(t, b.workflowsOf(t, "Order", "9"), 2)
	})

	t.Run("TwoSendersRacingStartOne", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineOrder(t)
		holder := b.session(t)
		tx, err := holder.conn.Begin(b.ctx)
		require.NoError(t, err)
		reached, err := heroSend(tx, "9", "paid", ", p_start => 'Order'")
		require.NoError(t, err)
		require.Equal(t, 1, reached)

		rival := b.session(t)
		var rivalReached int
		done := inBackground(func() error {
			var err error
			rivalReached, err = heroSend(rival.conn, "9", "paid", ", p_start => 'Order'")
			return err
		})
		b.waitBlocked(t, rival)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, receive(t, done))
		require.Equal(t, 1, rivalReached, "the first one's workflow")
		orders := b.workflowsOf(t, "Order", "9")
		require.Len(t, orders, 1)
		require.Len(t, b.events(t, orders[0]), 2)
	})

	t.Run("ARolledBackStarterLeavesTheStartToTheRival", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineOrder(t)
		holder := b.session(t)
		tx, err := holder.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = heroSend(tx, "9", "paid", ", p_start => 'Order'")
		require.NoError(t, err)
		rival := b.session(t)
		done := inBackground(func() error {
			_, err := heroSend(rival.conn, "9", "paid", ", p_start => 'Order'")
			return err
		})
		b.waitBlocked(t, rival)
		require.NoError(t, tx.Rollback(b.ctx))
		require.NoError(t, receive(t, done))
		orders := b.workflowsOf(t, "Order", "9")
		require.Len(t, orders, 1)
		require.Len(t, b.events(t, orders[0]), 1)
	})

	t.Run("UnderRepeatableReadARivalsStartIsASerializationFailure", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineOrder(t)
		late := b.session(t)
		tx, err := late.conn.BeginTx(b.ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select 1") // the snapshot
		require.NoError(t, err)
		_, err = heroSend(b.conn, "9", "paid", ", p_start => 'Order'")
		require.NoError(t, err)
		_, err = heroSend(tx, "9", "paid", ", p_start => 'Order'")
		requireCode(t, err, "40001")
		require.NoError(t, tx.Rollback(b.ctx))
		require.Len(t, b.workflowsOf(t, "Order", "9"), 1)
	})

	t.Run("BadInputWritesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineOrder(t)
		b.defineThreeSteps(t)
		other := b.create(t, "ThreeSteps", "9")
		for named, code := range map[string]string{
			", p_start => 'Nope'":               "WF001",
			", p_start => ''":                   "WF001",
			", p_start => repeat('x', 256)":     "22001",
			", p_key => '', p_start => 'Order'": "22023",
		} {
			_, err := heroSend(b.conn, "9", "paid", named)
			requireCode(t, err, code)
		}
		require.Empty(t, b.workflowsOf(t, "Order", "9"))
		require.Empty(t, b.events(t, other))
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.action_log where verb <> 'define_workflow'").Scan(&n))
		require.Zero(t, n, "nothing logged")
	})
}
