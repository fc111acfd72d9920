package tests

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// orphanMake runs hand-written SQL with Geneva's guard triggers disabled (as
// the owner may), making a shape no function makes.
func (b *testBundle) orphanMake(t *testing.T, statements ...string) {
	t.Helper()
	tx, err := b.conn.Begin(b.ctx)
	require.NoError(t, err)
	defer tx.Rollback(b.ctx) //nolint:errcheck
	for _, table := range []string{"geneva.workflows", "geneva.step_executions"} {
		_, err := tx.Exec(b.ctx, "alter table "+table+" disable trigger user")
		require.NoError(t, err)
	}
	for _, statement := range statements {
		_, err := tx.Exec(b.ctx, statement)
		require.NoError(t, err, statement)
	}
	for _, table := range []string{"geneva.workflows", "geneva.step_executions"} {
		_, err := tx.Exec(b.ctx, "alter table "+table+" enable trigger user")
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit(b.ctx))
}

// orphans lists geneva.orphan_workflows as "id shape".
func (b *testBundle) orphans(t *testing.T) map[int64]string {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select workflow_id, orphan from geneva.orphan_workflows")
	require.NoError(t, err)
	defer rows.Close()
	got := map[int64]string{}
	for rows.Next() {
		var id int64
		var shape string
		require.NoError(t, rows.Scan(&id, &shape))
		got[id] = shape
	}
	require.NoError(t, rows.Err())
	return got
}

func (b *testBundle) orphansRepaired(t *testing.T) int {
	t.Helper()
	raw, err := b.hkTry("")
	require.NoError(t, err)
	var counts struct {
		OrphansRepaired int `json:"orphans_repaired"`
	}
	require.NoError(t, json.Unmarshal(raw, &counts))
	return counts.OrphansRepaired
}

// TestOrphans: housekeeping finds each shape of a workflow whose state has no
// matching active execution, lists it in geneva.orphan_workflows, repairs it
// the way its state says and records what it did.
func TestOrphans(t *testing.T) {
	t.Parallel()

	t.Run("ReadyWithoutScheduled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		ended := b.create(t, "ThreeSteps", "ended")
		deleted := b.create(t, "ThreeSteps", "deleted")
		healthy := b.create(t, "ThreeSteps", "healthy")
		endedExecution := b.active(t, ended)
		// the strand: the scheduled execution marked done by hand
		b.orphanMake(t,
			"update geneva.step_executions set state = 'completed', outcome = 'success', finished_at = geneva.now() where workflow_id = "+itoa(ended),
			"delete from geneva.step_executions where workflow_id = "+itoa(deleted))
		require.Equal(t, map[int64]string{ended: "ready_without_scheduled", deleted: "ready_without_scheduled"}, b.orphans(t))

		require.Equal(t, 2, b.orphansRepaired(t))

		require.Empty(t, b.orphans(t))
		for id, attempt := range map[int64]int{ended: 2, deleted: 1} {
			next := b.active(t, id)
			require.Equal(t, "scheduled", next.State)
			require.Equal(t, "a", next.StepName)
			require.Equal(t, t0, next.ScheduledFor, "due now")
			require.NotNil(t, next.JobID)
			require.Equal(t, attempt, b.hkAttempt(t, next.ID))
			require.Equal(t, "ready_without_scheduled", next.Metadata["repaired"])
			require.Equal(t, "ready", b.workflow(t, id).State)
		}
		require.Equal(t, "success", deref(b.execution(t, endedExecution.ID).Outcome), "history is left as it is")
		require.Len(t, b.executions(t, healthy), 1, "a healthy workflow is not touched")
		require.Zero(t, b.orphansRepaired(t), "once")
	})

	t.Run("ReadyWithInProgress", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.orphanMake(t, "update geneva.workflows set state = 'ready', current_step_name = null where id = "+itoa(id))
		require.Equal(t, map[int64]string{id: "ready_without_scheduled"}, b.orphans(t))

		require.Equal(t, 1, b.orphansRepaired(t))

		old := b.execution(t, started.ExecutionID)
		require.Equal(t, "canceled", old.State)
		require.Equal(t, "recovered", deref(old.Outcome))
		require.Equal(t, "orphan_ready_without_scheduled", old.Metadata["recovery_reason"])
		next := b.active(t, id)
		require.Equal(t, "scheduled", next.State)
		require.Equal(t, "a", next.StepName)
		require.Equal(t, 2, b.hkAttempt(t, next.ID))
	})

	t.Run("PerformingWithoutInProgress", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.orphanMake(t, "update geneva.step_executions set state = 'failed', outcome = 'paused_by_exception', finished_at = geneva.now() where id = "+itoa(started.ExecutionID))
		require.Equal(t, map[int64]string{id: "performing_without_running"}, b.orphans(t))

		require.Equal(t, 1, b.orphansRepaired(t))

		require.Empty(t, b.orphans(t))
		next := b.active(t, id)
		require.Equal(t, "scheduled", next.State)
		require.Equal(t, "a", next.StepName, "the step it was performing, again")
		require.Equal(t, 2, b.hkAttempt(t, next.ID))
		require.Equal(t, "performing_without_running", next.Metadata["repaired"])
		wf := b.workflow(t, id)
		require.Equal(t, "ready", wf.State)
		require.Nil(t, wf.CurrentStepName)
	})

	t.Run("EndedWithActive", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		execution := b.active(t, id)
		b.orphanMake(t, "update geneva.workflows set state = 'canceled', canceled_at = geneva.now(), transitioned_at = geneva.now() where id = "+itoa(id))
		require.Equal(t, map[int64]string{id: "ended_with_active"}, b.orphans(t))

		require.Equal(t, 1, b.orphansRepaired(t))

		require.Empty(t, b.orphans(t))
		b.noActive(t, id)
		ended := b.execution(t, execution.ID)
		require.Equal(t, "canceled", ended.State)
		require.Equal(t, "recovered", deref(ended.Outcome))
		require.Equal(t, "orphan_ended_with_active", ended.Metadata["recovery_reason"])
		require.Equal(t, "cancelled", b.job(t, deref(execution.JobID)).State, "its job will not run")
		require.Equal(t, "canceled", b.workflow(t, id).State)
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
