package tests

import (
	"testing"
	"time"

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
