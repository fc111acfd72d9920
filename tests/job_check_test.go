package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJobChecked: a worker's report completes only the River job that ran
// the execution (its own, or the chain's for an inline step); naming another
// job is 22023 and changes nothing.
func TestJobChecked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Quick", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)
	mine := b.create(t, "Quick", "mine")
	other := b.create(t, "Quick", "other")
	myJob := deref(b.active(t, mine).JobID)
	otherJob := deref(b.active(t, other).JobID)
	first := b.run(t, mine)
	otherRun := b.run(t, other)
	// both jobs running, as River would have them
	b.guardExec(t, "update river_job set state = 'running', attempt = 1, attempted_at = now() where id = any($1)",
		[]int64{myJob, otherJob})

	jobState := func(id int64) string {
		var state string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select state::text from river_job where id = $1", id).Scan(&state))
		return state
	}
	refused := func(executionID int64) {
		t.Helper()
		for _, call := range []string{
			"select * from geneva.complete_step($1, 'success', null, $2)",
			"select * from geneva.complete_and_continue($1, 'success', null, $2)",
			"select * from geneva.fail_step($1, '{Boom}', 'boom', null, null, null, false, $2)",
			"select * from geneva.interrupt_step($1, $2)",
		} {
			_, err := b.conn.Exec(b.ctx, call, executionID, otherJob)
			requireCode(t, err, "22023")
		}
		require.Equal(t, "in_progress", b.execution(t, executionID).State)
		require.Equal(t, "running", jobState(otherJob))
	}

	refused(first.ExecutionID)

	// its own job: recorded, and the job completed
	var nextID int64
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select next_execution_id from geneva.complete_and_continue($1, 'success', null, $2)",
		first.ExecutionID, myJob).Scan(&nextID))
	require.Equal(t, "completed", jobState(myJob))

	// the inline step b has no job of its own: the chain's job is its job
	require.Nil(t, b.execution(t, nextID).JobID)
	refused(nextID)
	_, err := b.conn.Exec(b.ctx, "select * from geneva.complete_step($1, 'success', null, $2)", nextID, myJob)
	require.NoError(t, err)
	require.Equal(t, "completed", b.execution(t, nextID).State)

	// a copy of an execution's job (River delivered it twice: its arguments
	// name the execution) is the execution's job too
	third := b.active(t, mine)
	var copyID int64
	require.NoError(t, b.conn.QueryRow(b.ctx, `insert into river_job (args, kind, max_attempts, queue, state, attempt, attempted_at)
		select args, kind, max_attempts, queue, 'running', 1, now() from river_job where id = $1
		returning id`, deref(third.JobID)).Scan(&copyID))
	started := b.run(t, mine)
	refused(started.ExecutionID)
	_, err = b.conn.Exec(b.ctx, "select * from geneva.complete_step($1, 'success', null, $2)", started.ExecutionID, copyID)
	require.NoError(t, err)
	require.Equal(t, "completed", jobState(copyID))

	// an error's report completes its job too
	_, err = b.conn.Exec(b.ctx, "select * from geneva.fail_step($1, '{Boom}', 'boom', null, null, null, false, $2)",
		otherRun.ExecutionID, otherJob)
	require.NoError(t, err)
	require.Equal(t, "completed", jobState(otherJob))
}
