package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// geneva.workflow_list's final_step_at: the earliest instant the last step
// can start, from the step due now or next, each later step's wait and its
// "after" offset from the workflow's start (geneva._final_step_at).
func TestFinalStepAt(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour

	t.Run("WaitsOnly", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Waits", `{"steps": [{"name": "a"}, {"name": "b", "wait": "1 hour"}, {"name": "c", "wait": "2 hours"}]}`)
		id := b.create(t, "Waits", "1")
		require.Equal(t, t0.Add(3*time.Hour), b.finalStepAt(t, id))

		// a running half an hour late ends no earlier than now
		b.setNow(t, t0.Add(30*time.Minute))
		a := b.run(t, id)
		require.Equal(t, t0.Add(3*time.Hour+30*time.Minute), b.finalStepAt(t, id))
		b.complete(t, a.ExecutionID, "success", nil)
		require.Equal(t, t0.Add(90*time.Minute), b.active(t, id).ScheduledFor)
		require.Equal(t, t0.Add(3*time.Hour+30*time.Minute), b.finalStepAt(t, id))

		// b overdue: it can start now at the earliest
		b.setNow(t, t0.Add(5*time.Hour))
		require.Equal(t, t0.Add(7*time.Hour), b.finalStepAt(t, id))
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		require.Equal(t, t0.Add(7*time.Hour), b.finalStepAt(t, id))

		// the last step running: when it started; then ended
		b.setNow(t, t0.Add(8*time.Hour))
		c := b.run(t, id)
		require.Equal(t, t0.Add(8*time.Hour), b.finalStepAt(t, id))
		b.complete(t, c.ExecutionID, "success", nil)
		require.Nil(t, b.finalStepAtOrNil(t, id), "finished")
	})

	t.Run("OffsetsOnly", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Offsets", `{"steps": [{"name": "welcome"}, {"name": "remind", "after": "15 days"}, {"name": "charge", "after": "30 days"}]}`)
		id := b.create(t, "Offsets", "1")
		require.Equal(t, t0.Add(30*day), b.finalStepAt(t, id))
		// exact however late the steps before it run, while the offset decides
		b.setNow(t, t0.Add(2*day))
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		require.Equal(t, t0.Add(30*day), b.finalStepAt(t, id))
		b.setNow(t, t0.Add(20*day))
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		require.Equal(t, t0.Add(30*day), b.active(t, id).ScheduledFor)
		require.Equal(t, t0.Add(30*day), b.finalStepAt(t, id))
	})

	t.Run("Docs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		// docs/workflows.md's trial and its query
		b.define(t, "Trial", docsBlock(t, "../docs/workflows.md", "## Offsets from the start", "json"))
		id := b.create(t, "Trial", "1")
		b.setNow(t, t0.Add(3*day))
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		var listed int64
		var at time.Time
		var remaining time.Duration
		require.NoError(t, b.conn.QueryRow(b.ctx,
			docsBlock(t, "../docs/workflows.md", "## Time remaining until the final step", "sql")).Scan(&listed, &at, &remaining))
		require.Equal(t, id, listed)
		require.Equal(t, t0.Add(30*day), at, "charge on day 30")
		require.Equal(t, 27*day, remaining)
	})

	t.Run("WaitsAndOffsets", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Both", `{"steps": [{"name": "a"}, {"name": "b", "after": "15 days", "wait": "1 day"},
			{"name": "c", "after": "30 days", "wait": "10 days"}, {"name": "d", "wait": "10 days"}]}`)
		id := b.create(t, "Both", "1")
		// b at 15 days (its offset), c at 30 (its offset, later than 15 + 10), d 10 days on
		require.Equal(t, t0.Add(40*day), b.finalStepAt(t, id))
		b.setNow(t, t0.Add(20*day))
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		// b's offset has passed: its wait decides (21 days), then c's wait (31)
		require.Equal(t, t0.Add(21*day), b.active(t, id).ScheduledFor)
		require.Equal(t, t0.Add(41*day), b.finalStepAt(t, id))
	})

	t.Run("PassedOffsets", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Passed", `{"steps": [{"name": "a", "wait": "3 days"}, {"name": "b", "after": "1 day"}, {"name": "c", "after": "2 days", "wait": "1 hour"}]}`)
		id := b.create(t, "Passed", "1")
		// both offsets pass while a waits: b at once after a, c an hour on
		require.Equal(t, t0.Add(3*day+time.Hour), b.finalStepAt(t, id))
		b.setNow(t, t0.Add(4*day))
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		require.Equal(t, t0.Add(4*day), b.active(t, id).ScheduledFor)
		require.Equal(t, t0.Add(4*day+time.Hour), b.finalStepAt(t, id))
	})

	t.Run("AwaitIsALowerBound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Approve", `{"steps": [{"name": "decide", "wait": "1 hour", "await": {"event": "approved", "timeout": "7 days"}},
			{"name": "act", "wait": "1 day"}]}`)
		id := b.create(t, "Approve", "1")
		// due at the timeout, but the event may come as the wait ends
		require.Equal(t, t0.Add(time.Hour+7*day), b.active(t, id).ScheduledFor)
		require.Equal(t, t0.Add(time.Hour+day), b.finalStepAt(t, id))
	})

	t.Run("Ended", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Ends", `{"steps": [{"name": "a"}, {"name": "b", "after": "1 day"}]}`)
		canceled := b.create(t, "Ends", "1")
		require.Equal(t, t0.Add(day), b.finalStepAt(t, canceled))
		_, err := b.conn.Exec(b.ctx, "select geneva.cancel_workflow($1)", canceled)
		require.NoError(t, err)
		require.Nil(t, b.finalStepAtOrNil(t, canceled), "canceled")

		// a cancel requested of a performing workflow ends it at the step's end
		performing := b.create(t, "Ends", "2")
		b.run(t, performing)
		require.Equal(t, t0.Add(day), b.finalStepAt(t, performing))
		_, err = b.conn.Exec(b.ctx, "select geneva.cancel_workflow($1)", performing)
		require.NoError(t, err)
		require.Nil(t, b.finalStepAtOrNil(t, performing), "cancel requested")

		// paused: as if resumed now, its kept step at its time
		paused := b.create(t, "Ends", "3")
		_, err = b.conn.Exec(b.ctx, "select geneva.pause_workflow($1)", paused)
		require.NoError(t, err)
		require.Equal(t, t0.Add(day), b.finalStepAt(t, paused))
	})

	t.Run("Function", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Read", `{"steps": [{"name": "a"}, {"name": "b", "after": "2 days"}]}`)
		id := b.create(t, "Read", "1")
		var at *time.Time
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.final_step_at($1)", id).Scan(&at))
		require.NotNil(t, at)
		require.Equal(t, t0.Add(2*day), *at)
		require.Equal(t, *at, b.finalStepAt(t, id), "the view's")
		_, err := b.conn.Exec(b.ctx, "select geneva.final_step_at(null)")
		requireCode(t, err, "22004")
		_, err = b.conn.Exec(b.ctx, "select geneva.final_step_at(-1)")
		requireCode(t, err, "P0002")
	})
}

// finalStepAt is the workflow's final_step_at, which must not be NULL.
func (b *testBundle) finalStepAt(t *testing.T, workflowID int64) time.Time {
	t.Helper()
	at := b.finalStepAtOrNil(t, workflowID)
	require.NotNil(t, at, "workflow %d has no final_step_at", workflowID)
	return *at
}

func (b *testBundle) finalStepAtOrNil(t *testing.T, workflowID int64) *time.Time {
	t.Helper()
	// read as a dashboard reads it: a member of geneva_reader
	rows := viewRows[struct{ At *time.Time }](t, b,
		"select final_step_at from geneva.workflow_list where workflow_id = $1", workflowID)
	require.Len(t, rows, 1)
	return rows[0].At
}
