package tests

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// defineExpense defines "Expense": submit, then decide (after 1 hour, it
// awaits "approved" for 48 hours; on_timeout as given), then close.
func (b *testBundle) defineExpense(t *testing.T, onTimeout string) {
	t.Helper()
	b.define(t, "Expense", `{"steps": [
		{"name": "submit"},
		{"name": "decide", "wait": "1 hour", "await": {"event": "approved", "timeout": "48 hours", "on_timeout": "`+onTimeout+`"}},
		{"name": "close"}
	]}`)
}

func (b *testBundle) sendEvent(t *testing.T, workflowID int64, event string, payload any) bool {
	t.Helper()
	sent, err := b.trySendEvent(b.conn, workflowID, event, payload)
	require.NoError(t, err)
	return sent
}

func (b *testBundle) trySendEvent(conn *pgx.Conn, workflowID int64, event string, payload any) (bool, error) {
	var encoded *string
	if payload != nil {
		raw, err := json.Marshal(payload)
		if err != nil {
			return false, err
		}
		encoded = ptr(string(raw))
	}
	var sent bool
	err := conn.QueryRow(b.ctx, "select geneva.send_event($1, $2, $3::jsonb)", workflowID, event, encoded).Scan(&sent)
	return sent, err
}

type eventRow struct {
	ID         int64
	Name       string
	Payload    json.RawMessage
	SentAt     time.Time
	ConsumedBy *int64
}

func (b *testBundle) events(t *testing.T, workflowID int64) []eventRow {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, `select id, name, payload, sent_at, consumed_by
		from geneva.events where workflow_id = $1 order by id`, workflowID)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[eventRow])
	require.NoError(t, err)
	return all
}

// awaiting returns the event the workflow's step awaits now, per
// geneva.awaiting_events ("" when none).
func (b *testBundle) awaiting(t *testing.T, workflowID int64) (event string, timeoutAt time.Time) {
	t.Helper()
	err := b.conn.QueryRow(b.ctx, "select event, timeout_at from geneva.awaiting_events where workflow_id = $1",
		workflowID).Scan(&event, &timeoutAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", time.Time{}
	}
	require.NoError(t, err)
	return event, timeoutAt
}

// toDecide runs submit at t0 and returns the scheduled decide execution.
func (b *testBundle) toDecide(t *testing.T, heroID string) (int64, executionRow) {
	t.Helper()
	id := b.create(t, "Expense", heroID)
	submit := b.run(t, id)
	b.complete(t, submit.ExecutionID, "success", nil)
	decide := b.active(t, id)
	require.Equal(t, "decide", decide.StepName)
	return id, decide
}

func TestSendEvent(t *testing.T) {
	t.Parallel()

	t.Run("AwaitingStepIsDueAtItsTimeoutUntilTheEventComes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		id, decide := b.toDecide(t, "1")

		require.Equal(t, t0.Add(hours(49)), decide.ScheduledFor, "its own wait, then the timeout")
		event, timeoutAt := b.awaiting(t, id)
		require.Equal(t, "approved", event)
		require.Equal(t, t0.Add(hours(49)), timeoutAt)
		job := b.job(t, deref(decide.JobID))
		require.Equal(t, "scheduled", job.State)
		require.WithinDuration(t, b.dbNow(t).Add(hours(49)), job.ScheduledAt, time.Minute)

		// the event comes after the step's own wait: due now, its job available now
		b.setNow(t, t0.Add(2*time.Hour))
		require.True(t, b.sendEvent(t, id, "approved", map[string]any{"by": "ann"}))
		got := b.execution(t, decide.ID)
		require.Equal(t, t0.Add(2*time.Hour), got.ScheduledFor)
		job = b.job(t, deref(decide.JobID))
		require.Equal(t, "available", job.State)
		require.WithinDuration(t, b.dbNow(t), job.ScheduledAt, time.Minute)
		event, _ = b.awaiting(t, id)
		require.Empty(t, event, "a step whose event came waits for nothing")

		started, ok := b.startStep(t, decide.ID, nil)
		require.True(t, ok)
		require.Equal(t, "approved", deref(started.EventName))
		require.JSONEq(t, `{"by": "ann"}`, string(started.EventPayload))
		require.Equal(t, t0.Add(2*time.Hour), deref(started.EventSentAt))
		events := b.events(t, id)
		require.Len(t, events, 1)
		require.Equal(t, decide.ID, deref(events[0].ConsumedBy))
	})

	t.Run("EventDuringTheStepsOwnWaitIsConsumedWhenTheWaitEnds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		id, decide := b.toDecide(t, "1")

		b.setNow(t, t0.Add(10*time.Minute))
		require.True(t, b.sendEvent(t, id, "approved", nil))
		require.Equal(t, t0.Add(time.Hour), b.execution(t, decide.ID).ScheduledFor, "not before its own wait ends")
		_, ok := b.startStep(t, decide.ID, nil)
		require.False(t, ok, "early")

		b.setNow(t, t0.Add(time.Hour))
		started, ok := b.startStep(t, decide.ID, nil)
		require.True(t, ok)
		require.Equal(t, "approved", deref(started.EventName))
		require.Nil(t, started.EventPayload, "a NULL payload")
	})

	t.Run("EventBeforeTheWaitBeganIsKeptAndConsumedFirst", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		id := b.create(t, "Expense", "1")
		submit := b.run(t, id)
		// sent while submit runs, before decide is scheduled
		require.True(t, b.sendEvent(t, id, "approved", 1))
		require.True(t, b.sendEvent(t, id, "approved", 2))
		require.True(t, b.sendEvent(t, id, "other", 3))
		b.complete(t, submit.ExecutionID, "success", nil)

		decide := b.active(t, id)
		require.Equal(t, t0.Add(time.Hour), decide.ScheduledFor, "due when its own wait ends: its event is here")
		event, _ := b.awaiting(t, id)
		require.Empty(t, event)
		b.setNow(t, t0.Add(time.Hour))
		started, ok := b.startStep(t, decide.ID, nil)
		require.True(t, ok)
		require.JSONEq(t, "1", string(started.EventPayload), "the oldest first")
		events := b.events(t, id)
		require.Equal(t, decide.ID, deref(events[0].ConsumedBy))
		require.Nil(t, events[1].ConsumedBy, "each event is consumed once")
		require.Nil(t, events[2].ConsumedBy)
	})

	t.Run("TwoEventsOfOneNameGoToTwoAwaitingStepsInOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "TwoApprovals", `{"steps": [
			{"name": "first", "await": {"event": "approved", "timeout": "1 day"}},
			{"name": "second", "await": {"event": "approved", "timeout": "1 day"}}
		]}`)
		id := b.create(t, "TwoApprovals", "1")
		require.True(t, b.sendEvent(t, id, "approved", "a"))
		require.True(t, b.sendEvent(t, id, "approved", "b"))

		first := b.run(t, id)
		require.JSONEq(t, `"a"`, string(first.EventPayload))
		b.complete(t, first.ExecutionID, "success", nil)
		second := b.run(t, id)
		require.JSONEq(t, `"b"`, string(second.EventPayload))
		b.complete(t, second.ExecutionID, "success", nil)
		require.Equal(t, "finished", b.workflow(t, id).State)
	})

	t.Run("ARepeatOfTheStepSeesTheSameEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		id, decide := b.toDecide(t, "1")
		b.setNow(t, t0.Add(2*time.Hour))
		b.sendEvent(t, id, "approved", "yes")
		started, _ := b.startStep(t, decide.ID, nil)
		b.complete(t, started.ExecutionID, "reattempt", nil)

		again := b.active(t, id)
		require.Equal(t, "decide", again.StepName)
		require.Equal(t, t0.Add(2*time.Hour), again.ScheduledFor, "no new wait for the event")
		restarted := b.run(t, id)
		require.Equal(t, started.EventID, restarted.EventID)
		require.JSONEq(t, `"yes"`, string(restarted.EventPayload))

		// and after an error pauses it, a resume runs it with the event too
		b.fail(t, restarted.ExecutionID, []string{"Boom"}, "boom")
		require.Equal(t, "ready", b.call(t, "resume_workflow", id))
		resumed := b.run(t, id)
		require.Equal(t, started.EventID, resumed.EventID)
	})

	t.Run("TimeoutRunStartsTheStepWithoutAnEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		id, decide := b.toDecide(t, "1")
		b.setNow(t, t0.Add(49*time.Hour))
		started, ok := b.startStep(t, decide.ID, nil)
		require.True(t, ok)
		require.Nil(t, started.EventID)
		require.Equal(t, "performing", b.workflow(t, id).State)
	})

	t.Run("TimeoutCancelPauseSkip", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ onTimeout, state, outcome, workflowState string }{
			{"cancel", "canceled", "canceled_by_timeout", "canceled"},
			{"pause", "canceled", "paused_by_timeout", "paused"},
			{"skip", "skipped", "skipped_by_timeout", "ready"},
		} {
			t.Run(tc.onTimeout, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.setNow(t, t0)
				b.defineExpense(t, tc.onTimeout)
				id, decide := b.toDecide(t, "1")

				// a job that comes early changes nothing
				b.setNow(t, t0.Add(48*time.Hour))
				_, ok := b.startStep(t, decide.ID, nil)
				require.False(t, ok)
				require.Equal(t, "scheduled", b.execution(t, decide.ID).State)

				b.setNow(t, t0.Add(49*time.Hour))
				_, ok = b.startStep(t, decide.ID, nil)
				require.False(t, ok)
				got := b.execution(t, decide.ID)
				require.Equal(t, tc.state, got.State)
				require.Equal(t, tc.outcome, deref(got.Outcome))
				require.Equal(t, tc.workflowState, b.workflow(t, id).State)
				if tc.onTimeout == "skip" {
					require.Equal(t, "close", b.active(t, id).StepName)
				}
				if tc.onTimeout == "cancel" {
					require.False(t, b.sendEvent(t, id, "approved", nil), "an ended workflow takes no event")
					require.Empty(t, b.events(t, id), "and records none")
				}
				if tc.onTimeout == "pause" {
					// resume waits for the event again, with a fresh timeout
					b.setNow(t, t0.Add(50*time.Hour))
					require.Equal(t, "ready", b.call(t, "resume_workflow", id))
					again := b.active(t, id)
					require.Equal(t, "decide", again.StepName)
					require.Equal(t, t0.Add(98*time.Hour), again.ScheduledFor)
					event, timeoutAt := b.awaiting(t, id)
					require.Equal(t, "approved", event)
					require.Equal(t, t0.Add(98*time.Hour), timeoutAt)
					b.sendEvent(t, id, "approved", "late")
					started := b.run(t, id)
					require.JSONEq(t, `"late"`, string(started.EventPayload))
				}
			})
		}
	})

	t.Run("PausedWhileAwaitingKeepsTheEventForTheResume", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "cancel")
		id, decide := b.toDecide(t, "1")
		b.call(t, "pause_workflow", id)

		b.setNow(t, t0.Add(2*time.Hour))
		require.True(t, b.sendEvent(t, id, "approved", "while paused"))
		_, ok := b.startStep(t, decide.ID, nil)
		require.False(t, ok, "a paused workflow starts nothing")

		b.setNow(t, t0.Add(3*time.Hour))
		require.Equal(t, "ready", b.call(t, "resume_workflow", id))
		kept := b.active(t, id)
		require.Equal(t, decide.ID, kept.ID)
		started := b.run(t, id)
		require.JSONEq(t, `"while paused"`, string(started.EventPayload))
	})

	t.Run("CanceledWhileAwaiting", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		id, decide := b.toDecide(t, "1")
		require.Equal(t, "canceled", b.call(t, "cancel_workflow", id))
		require.Equal(t, "canceled_externally", deref(b.execution(t, decide.ID).Outcome))
		require.Equal(t, "cancelled", b.job(t, deref(decide.JobID)).State)
		require.False(t, b.sendEvent(t, id, "approved", nil))
		require.Empty(t, b.events(t, id))
		event, _ := b.awaiting(t, id)
		require.Empty(t, event)
	})

	// docs/events.md: an ended workflow takes no event, but the call is
	// logged, as send_hero_event's is when it reaches no workflow.
	t.Run("AnEndedWorkflowTakesNoneButTheCallIsLogged", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		id := b.create(t, "Expense", "1")
		require.Equal(t, "canceled", b.call(t, "cancel_workflow", id))
		app := dbtest.NewConnAs(t, b.conf, dbtest.App)
		start := b.lastActionID(t)

		sent, err := b.trySendEvent(app, id, "approved", map[string]string{"approved_by": "ann"})
		require.NoError(t, err)
		require.False(t, sent)
		require.Empty(t, b.events(t, id), "no event recorded")
		var reached int
		require.NoError(t, app.QueryRow(b.ctx, "select geneva.send_hero_event('User', '1', 'approved')").Scan(&reached))
		require.Zero(t, reached)
		require.Empty(t, b.events(t, id))

		rows := b.actions(t, start)
		require.Equal(t, []string{"send_event", "send_hero_event"}, verbs(rows))
		require.Equal(t, id, deref(rows[0].WorkflowID))
		require.Equal(t, string(dbtest.App), rows[0].PerformedBy)
		require.JSONEq(t, `{"event": "approved"}`, string(rows[0].Arguments))
		require.JSONEq(t, `{"sent": false}`, string(rows[0].Result))
		require.JSONEq(t, `{"reached": 0}`, string(rows[1].Result))
	})

	// docs/security.md, by design: the application may send an event before
	// any step awaits it, and the later step that awaits its name consumes
	// it when its wait begins.
	t.Run("TheAppMayPreSendAnEventALaterStepConsumes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")
		app := dbtest.NewConnAs(t, b.conf, dbtest.App)
		var id int64
		require.NoError(t, app.QueryRow(b.ctx, "select geneva.create_workflow('Expense', 'User', '1')").Scan(&id))
		// before the first step has run, the approval the second awaits
		sent, err := b.trySendEvent(app, id, "approved", "early")
		require.NoError(t, err)
		require.True(t, sent)

		submit := b.run(t, id)
		require.Equal(t, "submit", submit.StepName)
		require.Nil(t, submit.EventID, "submit awaits nothing")
		b.complete(t, submit.ExecutionID, "success", nil)
		decide := b.active(t, id)
		require.Equal(t, t0.Add(time.Hour), decide.ScheduledFor, "due when its own wait ends, not at its timeout")
		b.setNow(t, t0.Add(time.Hour))
		started := b.run(t, id)
		require.Equal(t, "decide", started.StepName)
		require.JSONEq(t, `"early"`, string(started.EventPayload))
		require.Equal(t, decide.ID, deref(b.events(t, id)[0].ConsumedBy))
	})

	t.Run("OperatorSkipAndScheduleDoNotWaitForTheEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "run")

		skipped, decide := b.toDecide(t, "1")
		require.Equal(t, "ready", b.call(t, "skip_step", skipped))
		require.Equal(t, "skipped_externally", deref(b.execution(t, decide.ID).Outcome))
		require.Equal(t, "close", b.active(t, skipped).StepName)

		scheduled, decide := b.toDecide(t, "2")
		require.Equal(t, "ready", b.call(t, "schedule_step", scheduled))
		now := b.active(t, scheduled)
		require.NotEqual(t, decide.ID, now.ID)
		require.Equal(t, t0, now.ScheduledFor, "runs now")
		started := b.run(t, scheduled)
		require.Equal(t, "decide", started.StepName)
		require.Nil(t, started.EventID, "without the event")
	})

	t.Run("EventRacingItsTimeoutOneWins", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineExpense(t, "cancel")
		const n = 20
		ids := make([]int64, n)
		decides := make([]executionRow, n)
		for i := range ids {
			ids[i], decides[i] = b.toDecide(t, strings.Repeat("h", i+1))
		}
		at := t0.Add(49 * time.Hour)
		starter := dbtest.NewConn(t, b.conf)
		sender := dbtest.NewConn(t, b.conf)
		setNowOn(t, starter, at)
		setNowOn(t, sender, at)

		sent := make([]bool, n)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range ids {
				_, _, err := startStepOn(b.ctx, starter, decides[i].ID, nil)
				require.NoError(t, err)
			}
		}()
		go func() {
			defer wg.Done()
			for i := n - 1; i >= 0; i-- {
				var err error
				sent[i], err = b.trySendEvent(sender, ids[i], "approved", i)
				require.NoError(t, err)
			}
		}()
		wg.Wait()

		for i, id := range ids {
			got := b.execution(t, decides[i].ID)
			events := b.events(t, id)
			if sent[i] {
				// the event won: the step started, or will, with it
				require.Len(t, events, 1)
				if got.State == "scheduled" {
					started, ok := startedOK(t, b, decides[i].ID)
					require.True(t, ok)
					require.Equal(t, events[0].ID, deref(started.EventID))
				} else {
					require.Equal(t, "in_progress", got.State)
					require.Equal(t, decides[i].ID, deref(events[0].ConsumedBy))
				}
				require.Equal(t, "performing", b.workflow(t, id).State)
			} else {
				// the timeout won: canceled, and the event recorded nothing
				require.Equal(t, "canceled_by_timeout", deref(got.Outcome))
				require.Equal(t, "canceled", b.workflow(t, id).State)
				require.Empty(t, events)
			}
		}
	})

	t.Run("BadInputWritesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineExpense(t, "run")
		id := b.create(t, "Expense", "1")
		for statement, code := range map[string]string{
			"select geneva.send_event(-1, 'approved')":                                                "P0002",
			"select geneva.send_event(null, 'approved')":                                              "22004",
			"select geneva.send_event($1, null)":                                                      "22004",
			"select geneva.send_event($1, '')":                                                        "22023",
			"select geneva.send_event($1, repeat('x', 256))":                                          "22001",
			"select geneva.send_event($1, 'approved', to_jsonb(repeat('x', 1048577)))":                "22001",
			"select geneva.send_event(-1, '')":                                                        "22023",
			"select geneva.send_event($1, 'approved', jsonb_build_object('a', repeat('x', 1048576)))": "22001",
			// nested deeper than a worker decodes (issue 44, item 2), or than
			// the bound of 64 levels
			"select geneva.send_event($1, 'approved', (repeat('[', 10001) || repeat(']', 10001))::jsonb)":        "22023",
			"select geneva.send_event($1, 'approved', (repeat('[', 65) || repeat(']', 65))::jsonb)":              "22023",
			`select geneva.send_event($1, 'approved', (repeat('{"a": ', 64) || '[]' || repeat('}', 64))::jsonb)`: "22023",
		} {
			args := []any{}
			if strings.Contains(statement, "$1") {
				args = append(args, id)
			}
			_, err := b.conn.Exec(b.ctx, statement, args...)
			requireCode(t, err, code)
		}
		require.Empty(t, b.events(t, id))
		var sent bool
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.send_event($1, repeat('x', 255), to_jsonb(repeat('x', 1000000)))", id).Scan(&sent))
		require.True(t, sent, "255 bytes and a payload under 1 MiB are fine")
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.send_event($1, 'deep',
			(repeat('{"a": ', 63) || '[1, "x"]' || repeat('}', 63))::jsonb)`, id).Scan(&sent))
		require.True(t, sent, "64 levels are fine")
	})

	t.Run("EventsAreHistory", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineExpense(t, "run")
		id := b.create(t, "Expense", "1")
		b.sendEvent(t, id, "approved", nil)
		for _, statement := range []string{
			"insert into geneva.events (workflow_id, name, sent_at, sent_by) values ($1, 'approved', now(), 'me')",
			"update geneva.events set payload = '1' where workflow_id = $1",
			"update geneva.events set consumed_by = 1, consumed_at = now() where workflow_id = $1",
			"delete from geneva.events where workflow_id = $1",
		} {
			_, err := b.conn.Exec(b.ctx, statement, id)
			requireCode(t, err, "55000")
		}
	})
}

func startedOK(t *testing.T, b *testBundle, executionID int64) (startedStep, bool) {
	t.Helper()
	b.setNow(t, t0.Add(49*time.Hour))
	return b.startStep(t, executionID, nil)
}
