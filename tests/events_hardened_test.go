package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// defineReview defines "Review": prepare, then decide (awaiting the await
// given, as JSON, for 48 hours), then close.
func (b *testBundle) defineReview(t *testing.T, await string) {
	t.Helper()
	b.define(t, "Review", `{"steps": [
		{"name": "prepare"},
		{"name": "decide", "await": `+await+`},
		{"name": "close"}
	]}`)
}

// toReviewDecide runs prepare of a new Review and returns the scheduled
// decide execution.
func (b *testBundle) toReviewDecide(t *testing.T, id int64) executionRow {
	t.Helper()
	b.complete(t, b.run(t, id).ExecutionID, "success", nil)
	decide := b.active(t, id)
	require.Equal(t, "decide", decide.StepName)
	return decide
}

// awaitingAll is what geneva.awaiting_events says of the workflow's wait:
// the names and since; nil names when it waits for nothing.
func (b *testBundle) awaitingAll(t *testing.T, workflowID int64) (events []string, since string) {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select events, since from geneva.awaiting_events where workflow_id = $1", workflowID)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		require.NoError(t, rows.Scan(&events, &since))
	}
	require.NoError(t, rows.Err())
	return events, since
}

// TestAwaitSince: "await": {"since": "wait" | "kept"} (issue 49, item 2).
func TestAwaitSince(t *testing.T) {
	t.Parallel()

	t.Run("KeptCountsAnEventSentBeforeTheStepIsReached", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineReview(t, `{"event": "approved", "timeout": "48 hours", "since": "kept"}`)
		id := b.create(t, "Review", "1")
		require.True(t, b.sendEvent(t, id, "approved", "early"))

		decide := b.toReviewDecide(t, id)
		require.Equal(t, t0, decide.ScheduledFor, "due at once: the kept event counts")
		started, ok := b.startStep(t, decide.ID, nil)
		require.True(t, ok)
		require.JSONEq(t, `"early"`, string(started.EventPayload))
	})

	t.Run("WaitIgnoresEventsSentBeforeAndLeavesThemForOthers", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Review", `{"steps": [
			{"name": "prepare"},
			{"name": "decide", "await": {"event": "approved", "timeout": "48 hours", "since": "wait"}},
			{"name": "archive", "await": {"event": "approved", "timeout": "48 hours"}}
		]}`)
		id := b.create(t, "Review", "1")
		require.True(t, b.sendEvent(t, id, "approved", "stale"))

		decide := b.toReviewDecide(t, id)
		require.Equal(t, t0.Add(hours(48)), decide.ScheduledFor, "the stale event does not count: due at the timeout")
		events, since := b.awaitingAll(t, id)
		require.Equal(t, []string{"approved"}, events)
		require.Equal(t, "wait", since)
		// an early claim (a job run before its time) takes nothing
		_, ok := b.startStep(t, decide.ID, nil)
		require.False(t, ok)

		b.setNow(t, t0.Add(time.Hour))
		require.True(t, b.sendEvent(t, id, "approved", "fresh"))
		require.Equal(t, t0.Add(time.Hour), b.execution(t, decide.ID).ScheduledFor, "due when a new one comes")
		started, ok := b.startStep(t, decide.ID, nil)
		require.True(t, ok)
		require.JSONEq(t, `"fresh"`, string(started.EventPayload))

		// the stale one stays for a step that counts kept events
		b.complete(t, started.ExecutionID, "success", nil)
		archive := b.active(t, id)
		require.Equal(t, t0.Add(time.Hour), archive.ScheduledFor)
		started, ok = b.startStep(t, archive.ID, nil)
		require.True(t, ok)
		require.JSONEq(t, `"stale"`, string(started.EventPayload))
		for _, ev := range b.events(t, id) {
			require.NotNil(t, ev.ConsumedBy, "every event consumed once")
		}
	})

	t.Run("WaitCountsAnEventSentDuringTheStepsOwnWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Review", `{"steps": [
			{"name": "prepare"},
			{"name": "decide", "wait": "1 hour", "await": {"event": "approved", "timeout": "48 hours", "since": "wait"}}
		]}`)
		id := b.create(t, "Review", "1")
		decide := b.toReviewDecide(t, id)
		require.Equal(t, t0.Add(hours(49)), decide.ScheduledFor)

		b.setNow(t, t0.Add(time.Minute))
		require.True(t, b.sendEvent(t, id, "approved", nil))
		require.Equal(t, t0.Add(time.Hour), b.execution(t, decide.ID).ScheduledFor,
			"sent after the step was reached: due when its own wait ends")
	})

	t.Run("AResumeKeepsTheStepsCutOff", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineReview(t, `{"event": "approved", "timeout": "1 hour", "on_timeout": "pause", "since": "wait"}`)
		id := b.create(t, "Review", "1")
		require.True(t, b.sendEvent(t, id, "approved", "stale"))
		decide := b.toReviewDecide(t, id)

		// the timeout pauses it; an event sent while paused counts on resume
		b.setNow(t, t0.Add(time.Hour))
		_, ok := b.startStep(t, decide.ID, nil)
		require.False(t, ok)
		require.Equal(t, "paused_by_timeout", deref(b.execution(t, decide.ID).Outcome))
		require.True(t, b.sendEvent(t, id, "approved", "while paused"))
		b.call(t, "resume_workflow", id)
		again := b.active(t, id)
		require.Equal(t, t0.Add(time.Hour), again.ScheduledFor, "due at once: the event sent while paused counts")
		started, ok := b.startStep(t, again.ID, nil)
		require.True(t, ok)
		require.JSONEq(t, `"while paused"`, string(started.EventPayload), "the stale one still does not")
	})

	// The cut-off is exact: a sender holds the workflow's lock from before
	// it draws its event's id until it commits, and so does the end that
	// reaches the step. Whichever commits first decides, on real
	// connections.
	t.Run("ASendRacingTheStepsReachIsOrderedByTheWorkflowsLock", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineReview(t, `{"event": "approved", "timeout": "48 hours", "since": "wait"}`)

		// the end commits first: the event is after the step was reached
		first := b.create(t, "Review", "1")
		prepare := b.run(t, first)
		ender := b.session(t)
		setNowOn(t, ender.conn, t0)
		tx, err := ender.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select geneva.complete_step($1)", prepare.ExecutionID)
		require.NoError(t, err)
		sender := b.session(t)
		setNowOn(t, sender.conn, t0)
		done := inBackground(func() error {
			_, err := b.trySendEvent(sender.conn, first, "approved", nil)
			return err
		})
		b.waitBlocked(t, sender)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, <-done)
		require.Equal(t, t0, b.active(t, first).ScheduledFor, "the event counts")

		// the send commits first: the event is before the step was reached
		second := b.create(t, "Review", "2")
		prepare = b.run(t, second)
		tx, err = sender.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = b.trySendEvent(tx.Conn(), second, "approved", nil)
		require.NoError(t, err)
		done = inBackground(func() error {
			_, err := ender.conn.Exec(b.ctx, "select geneva.complete_step($1)", prepare.ExecutionID)
			return err
		})
		b.waitBlocked(t, ender)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, <-done)
		require.Equal(t, t0.Add(hours(48)), b.active(t, second).ScheduledFor, "the event does not count")
	})
}

// TestAwaitAnyOf: "await": {"event": ["approved", "rejected"]} (issue 49,
// item 3).
func TestAwaitAnyOf(t *testing.T) {
	t.Parallel()

	t.Run("EitherNameStartsTheStepWhichSeesWhichCame", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineReview(t, `{"event": ["approved", "rejected"], "timeout": "48 hours"}`)
		id := b.create(t, "Review", "1")
		decide := b.toReviewDecide(t, id)
		require.Equal(t, t0.Add(hours(48)), decide.ScheduledFor)
		events, since := b.awaitingAll(t, id)
		require.Equal(t, []string{"approved", "rejected"}, events)
		require.Equal(t, "kept", since)
		event, _ := b.awaiting(t, id)
		require.Equal(t, "approved", event, "event: the first name")

		require.True(t, b.sendEvent(t, id, "other", nil))
		require.Equal(t, t0.Add(hours(48)), b.execution(t, decide.ID).ScheduledFor, "another name: still waiting")
		b.setNow(t, t0.Add(time.Hour))
		require.True(t, b.sendEvent(t, id, "rejected", map[string]string{"why": "late"}))
		require.Equal(t, t0.Add(time.Hour), b.execution(t, decide.ID).ScheduledFor)
		events, _ = b.awaitingAll(t, id)
		require.Nil(t, events, "its event came")
		started, ok := b.startStep(t, decide.ID, nil)
		require.True(t, ok)
		require.Equal(t, "rejected", deref(started.EventName))
		require.JSONEq(t, `{"why": "late"}`, string(started.EventPayload))
	})

	t.Run("KeptEventsOfAnyNameTheOldestFirst", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineReview(t, `{"event": ["approved", "rejected"], "timeout": "48 hours"}`)
		id := b.create(t, "Review", "1")
		require.True(t, b.sendEvent(t, id, "rejected", 1))
		require.True(t, b.sendEvent(t, id, "approved", 2))

		decide := b.toReviewDecide(t, id)
		require.Equal(t, t0, decide.ScheduledFor)
		started, ok := b.startStep(t, decide.ID, nil)
		require.True(t, ok)
		require.Equal(t, "rejected", deref(started.EventName))
		evs := b.events(t, id)
		require.Equal(t, started.ExecutionID, deref(evs[0].ConsumedBy))
		require.Nil(t, evs[1].ConsumedBy, "one event a step")
	})

	t.Run("WithSinceWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineReview(t, `{"event": ["approved", "rejected"], "timeout": "48 hours", "since": "wait"}`)
		id := b.create(t, "Review", "1")
		require.True(t, b.sendEvent(t, id, "rejected", "stale"))
		decide := b.toReviewDecide(t, id)
		require.Equal(t, t0.Add(hours(48)), decide.ScheduledFor)
		require.True(t, b.sendEvent(t, id, "approved", "fresh"))
		started, ok := b.startStep(t, decide.ID, nil)
		require.True(t, ok)
		require.Equal(t, "approved", deref(started.EventName))
	})

	t.Run("DefinitionStepsShowsEveryName", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineReview(t, `{"event": ["approved", "rejected"], "timeout": "48 hours", "since": "wait"}`)
		var first string
		var all []string
		var since string
		require.NoError(t, b.conn.QueryRow(b.ctx, `select await_event, await_events, await_since
			from geneva.definition_steps where workflow_type = 'Review' and step_name = 'decide'`).Scan(&first, &all, &since))
		require.Equal(t, "approved", first)
		require.Equal(t, []string{"approved", "rejected"}, all)
		require.Equal(t, "wait", since)
	})
}

// defineCancelableOrder defines "Order": reserve, ship, then deliver; an
// order.canceled event cancels it.
func (b *testBundle) defineCancelableOrder(t *testing.T) {
	t.Helper()
	b.define(t, "Order", `{"steps": [{"name": "reserve"}, {"name": "ship"}, {"name": "deliver"}],
		"cancel_on": ["order.canceled", "order.refunded"]}`)
}

// TestCancelOn: a type's "cancel_on" (issue 49, item 4).
func TestCancelOn(t *testing.T) {
	t.Parallel()

	t.Run("AReadyWorkflowIsCanceledInTheSendersTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineCancelableOrder(t)
		id := b.create(t, "Order", "1")
		reserve := b.active(t, id)

		// rolled back with the sender's transaction
		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		var sent bool
		require.NoError(t, tx.QueryRow(b.ctx, "select geneva.send_event($1, 'order.canceled')", id).Scan(&sent))
		require.True(t, sent)
		require.NoError(t, tx.Rollback(b.ctx))
		require.Equal(t, "ready", b.workflow(t, id).State)

		app := dbtest.NewConnAs(t, b.conf, dbtest.App)
		require.NoError(t, app.QueryRow(b.ctx, "select geneva.send_event($1, 'order.canceled')", id).Scan(&sent))
		require.True(t, sent)
		wf := b.workflow(t, id)
		require.Equal(t, "canceled", wf.State)
		require.NotNil(t, wf.CanceledAt)
		got := b.execution(t, reserve.ID)
		require.Equal(t, "canceled", got.State)
		require.Equal(t, "canceled_by_event", deref(got.Outcome))
		require.Len(t, b.events(t, id), 1, "the event is recorded")

		// ended: later events are not recorded
		require.False(t, b.sendEvent(t, id, "order.canceled", nil))
	})

	t.Run("APausedWorkflowIsCanceledAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineCancelableOrder(t)
		kept := b.create(t, "Order", "1")
		b.call(t, "pause_workflow", kept)
		keptExecution := b.active(t, kept)
		failed := b.create(t, "Order", "2")
		b.fail(t, b.run(t, failed).ExecutionID, []string{"E"}, "boom") // paused_by_exception, no execution left

		require.True(t, b.sendEvent(t, kept, "order.refunded", nil))
		require.True(t, b.sendEvent(t, failed, "order.canceled", nil))
		require.Equal(t, "canceled", b.workflow(t, kept).State)
		require.Equal(t, "canceled_by_event", deref(b.execution(t, keptExecution.ID).Outcome))
		require.Equal(t, "canceled", b.workflow(t, failed).State)
		b.noActive(t, failed)
	})

	t.Run("APerformingWorkflowIsCanceledWhenItsStepEnds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineCancelableOrder(t)
		id := b.create(t, "Order", "1")
		reserve := b.run(t, id)

		require.True(t, b.sendEvent(t, id, "order.canceled", nil))
		wf := b.workflow(t, id)
		require.Equal(t, "performing", wf.State, "the running step is not interrupted")
		require.Equal(t, "cancel_by_event", deref(wf.RequestedAction))
		_, err := b.tryCall("pause_workflow", id)
		requireCode(t, err, "55000")

		done := b.complete(t, reserve.ExecutionID, "success", nil)
		require.Equal(t, "success", deref(done.Outcome), "the step's own result is recorded")
		require.Equal(t, "canceled", done.WorkflowState)
		all := b.executions(t, id)
		require.Len(t, all, 2)
		require.Equal(t, "ship", all[1].StepName)
		require.Equal(t, "canceled", all[1].State)
		require.Equal(t, "canceled_by_event", deref(all[1].Outcome), "what the cancel stopped")
		require.Nil(t, b.workflow(t, id).RequestedAction)
	})

	t.Run("ALastStepsEndCancelsInsteadOfFinishing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Short", `{"steps": [{"name": "only"}], "cancel_on": ["stop"]}`)
		id := b.create(t, "Short", "1")
		only := b.run(t, id)
		require.True(t, b.sendEvent(t, id, "stop", nil))
		require.Equal(t, "canceled", b.complete(t, only.ExecutionID, "success", nil).WorkflowState)
		require.Len(t, b.executions(t, id), 1)
	})

	// The event and the running step's end race on real connections: the
	// workflow's lock orders them, and either way the workflow ends
	// canceled, never advancing past the step.
	t.Run("SentWhileTheStepRunsTheEndCancelsInsteadOfAdvancing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineCancelableOrder(t)
		id := b.create(t, "Order", "1")
		reserve := b.run(t, id)

		sender := b.session(t)
		setNowOn(t, sender.conn, t0)
		tx, err := sender.conn.Begin(b.ctx)
		require.NoError(t, err)
		var sent bool
		require.NoError(t, tx.QueryRow(b.ctx, "select geneva.send_event($1, 'order.canceled')", id).Scan(&sent))
		require.True(t, sent)

		ender := b.session(t)
		setNowOn(t, ender.conn, t0)
		var outcome, state string
		done := inBackground(func() error {
			return ender.conn.QueryRow(b.ctx, "select outcome, workflow_state from geneva.complete_step($1)",
				reserve.ExecutionID).Scan(&outcome, &state)
		})
		b.waitBlocked(t, ender)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, <-done)
		require.Equal(t, "success", outcome)
		require.Equal(t, "canceled", state)
		all := b.executions(t, id)
		require.Len(t, all, 2)
		require.Equal(t, "canceled_by_event", deref(all[1].Outcome))
	})

	t.Run("SentWhileTheStepsEndCommitsTheNextStepIsCanceled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineCancelableOrder(t)
		id := b.create(t, "Order", "1")
		reserve := b.run(t, id)

		ender := b.session(t)
		setNowOn(t, ender.conn, t0)
		tx, err := ender.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select geneva.complete_step($1)", reserve.ExecutionID)
		require.NoError(t, err)

		sender := b.session(t)
		setNowOn(t, sender.conn, t0)
		done := inBackground(func() error {
			_, err := sender.conn.Exec(b.ctx, "select geneva.send_event($1, 'order.canceled')", id)
			return err
		})
		b.waitBlocked(t, sender)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, <-done)
		require.Equal(t, "canceled", b.workflow(t, id).State)
		all := b.executions(t, id)
		require.Len(t, all, 2)
		require.Equal(t, "success", deref(all[0].Outcome))
		require.Equal(t, "canceled_by_event", deref(all[1].Outcome))
	})

	t.Run("OnlyItsNamesAndItsType", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineCancelableOrder(t)
		b.defineThreeSteps(t)
		order := b.create(t, "Order", "1")
		other := b.create(t, "ThreeSteps", "1")

		require.True(t, b.sendEvent(t, order, "order.shipped", nil))
		require.Equal(t, "ready", b.workflow(t, order).State, "another name")
		var reached int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.send_hero_event('User', '1', 'order.canceled')").Scan(&reached))
		require.Equal(t, 2, reached)
		require.Equal(t, "canceled", b.workflow(t, order).State)
		require.Equal(t, "ready", b.workflow(t, other).State, "a type without it in cancel_on")
	})

	t.Run("AnOperatorsCancelStaysItsOwn", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineCancelableOrder(t)
		id := b.create(t, "Order", "1")
		reserve := b.run(t, id)
		b.call(t, "cancel_workflow", id)
		require.True(t, b.sendEvent(t, id, "order.canceled", nil))
		require.Equal(t, "cancel", deref(b.workflow(t, id).RequestedAction))
		b.complete(t, reserve.ExecutionID, "success", nil)
		require.Equal(t, "canceled_externally", deref(b.executions(t, id)[1].Outcome))
	})
}

// TestEventSender: the step sees who sent its event and when (issue 49,
// item 6), from start_steps and from a next step an end starts inline.
func TestEventSender(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.defineReview(t, `{"event": "approved", "timeout": "48 hours"}`)
	id := b.create(t, "Review", "1")
	decide := b.toReviewDecide(t, id)

	app := dbtest.NewConnAs(t, b.conf, dbtest.App)
	setNowOn(t, app, t0.Add(time.Minute))
	var sender string
	require.NoError(t, app.QueryRow(b.ctx, "select session_user").Scan(&sender))
	var sent bool
	require.NoError(t, app.QueryRow(b.ctx, "select geneva.send_event($1, 'approved')", id).Scan(&sent))
	require.True(t, sent)

	b.setNow(t, t0.Add(time.Hour))
	started, ok := b.startStep(t, decide.ID, nil)
	require.True(t, ok)
	require.Equal(t, sender, deref(started.EventSentBy))
	require.NotEqual(t, sender, b.dbUser(t), "not the claimer")
	require.Equal(t, t0.Add(time.Minute), deref(started.EventSentAt))

	// a reattempt due now, started inline, carries the event and its sender
	next := b.continueStep(t, started.ExecutionID, "reattempt", nil)
	require.NotNil(t, next.NextExecutionID)
	require.Equal(t, "approved", deref(next.NextEventName))
	require.Equal(t, sender, deref(next.NextEventSentBy))
	require.Equal(t, t0.Add(time.Minute), deref(next.NextEventSentAt))
}

func (b *testBundle) dbUser(t *testing.T) string {
	t.Helper()
	var user string
	require.NoError(t, b.conn.QueryRow(b.ctx, "select session_user").Scan(&user))
	return user
}
