package tests

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hkCounts is what geneva.housekeep returns.
type hkCounts struct {
	WorkflowsCleanedUp       int  `json:"workflows_cleaned_up"`
	StepExecutionsCleanedUp  int  `json:"step_executions_cleaned_up"`
	StuckInProgressRecovered int  `json:"stuck_in_progress_recovered"`
	StuckScheduledRecovered  int  `json:"stuck_scheduled_recovered"`
	More                     bool `json:"more"`
}

// hkRound runs one round of housekeeping on the bundle's connection (so on
// its fake clock); args are the SQL arguments, e.g. "p_batch_size => 2".
func (b *testBundle) hkRound(t *testing.T, args string) hkCounts {
	t.Helper()
	raw, err := b.hkTry(args)
	require.NoError(t, err)
	var counts hkCounts
	require.NoError(t, json.Unmarshal(raw, &counts))
	return counts
}

func (b *testBundle) hkTry(args string) ([]byte, error) {
	var raw []byte
	err := b.conn.QueryRow(b.ctx, "select geneva.housekeep("+args+")::text").Scan(&raw)
	return raw, err
}

// hkAttempt reads an execution's attempt number.
func (b *testBundle) hkAttempt(t *testing.T, executionID int64) int {
	t.Helper()
	var attempt int
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select attempt from geneva.step_executions where id = $1", executionID).Scan(&attempt))
	return attempt
}

// hkWorkflowCount counts the workflows with the id, and hkExecutionCount their
// executions, live or moved into history (docs/history.md): what retention
// has not deleted.
func (b *testBundle) hkWorkflowCount(t *testing.T, id int64) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select (select count(*) from geneva.workflows where id = $1)
		+ (select count(*) from geneva.workflows_history where id = $1)`, id).Scan(&n))
	return n
}

func (b *testBundle) hkExecutionCount(t *testing.T, workflowID int64) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select (select count(*) from geneva.step_executions where workflow_id = $1)
		+ (select count(*) from geneva.step_executions_history where workflow_id = $1)`, workflowID).Scan(&n))
	return n
}

// hkLoseJob removes an execution's River job, as if River lost it.
func (b *testBundle) hkLoseJob(t *testing.T, execution executionRow) {
	t.Helper()
	require.NotNil(t, execution.JobID)
	_, err := b.conn.Exec(b.ctx, "delete from public.river_job where id = $1", *execution.JobID)
	require.NoError(t, err)
}

// hkFinished creates a workflow of "One" for the hero and finishes it now.
func (b *testBundle) hkFinished(t *testing.T, heroID string) int64 {
	t.Helper()
	id := b.create(t, "One", heroID)
	b.complete(t, b.run(t, id).ExecutionID, "success", nil)
	require.Equal(t, "finished", b.workflow(t, id).State)
	return id
}

// Only retention: the stuck passes look so far back that they find nothing.
const hkRetentionOnly = "p_stuck_in_progress_after => interval '1000 years', p_stuck_scheduled_after => interval '1000 years'"

func TestHousekeep(t *testing.T) {
	t.Parallel()

	t.Run("DeletesInBatches", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		var ids []int64
		for i := 0; i < 5; i++ {
			ids = append(ids, b.hkFinished(t, fmt.Sprint(i)))
		}
		b.setNow(t, t0.Add(31*24*time.Hour))

		var rounds []hkCounts
		for len(rounds) < 10 {
			counts := b.hkRound(t, "p_batch_size => 2, "+hkRetentionOnly)
			rounds = append(rounds, counts)
			if !counts.More {
				break
			}
		}

		require.Equal(t, []hkCounts{
			{WorkflowsCleanedUp: 2, StepExecutionsCleanedUp: 2, More: true},
			{WorkflowsCleanedUp: 2, StepExecutionsCleanedUp: 2, More: true},
			{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1, More: false},
		}, rounds)
		for _, id := range ids {
			require.Zero(t, b.hkWorkflowCount(t, id))
		}
	})

	t.Run("DeletesOldEndedWorkflowsWithTheirExecutions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		finished := b.hkFinished(t, "1")
		canceled := b.create(t, "One", "2")
		b.call(t, "cancel_workflow", canceled)
		require.Equal(t, 1, b.hkExecutionCount(t, finished))
		require.Equal(t, 1, b.hkExecutionCount(t, canceled))

		// (retention drops whole days: the day they ended, over 30 days ago)
		b.setNow(t, t0.Add(31*24*time.Hour))
		counts := b.hkRound(t, hkRetentionOnly)

		require.Equal(t, hkCounts{WorkflowsCleanedUp: 2, StepExecutionsCleanedUp: 2}, counts)
		for _, id := range []int64{finished, canceled} {
			require.Zero(t, b.hkWorkflowCount(t, id))
			require.Zero(t, b.hkExecutionCount(t, id), "executions go with their workflow")
		}
	})

	t.Run("KeepsABusyDatabaseFlat", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		const perDay = 6
		day := 24 * time.Hour
		for d := 0; d < 8; d++ {
			b.setNow(t, t0.Add(time.Duration(d)*day))
			for i := 0; i < perDay; i++ {
				b.hkFinished(t, fmt.Sprintf("%d-%d", d, i))
			}
			// Half a day later, a retention of two days keeps what ended
			// today and yesterday, whatever has gone before.
			b.setNow(t, t0.Add(time.Duration(d)*day+12*time.Hour))
			for rounds := 0; ; rounds++ {
				require.Less(t, rounds, 10)
				if !b.hkRound(t, "p_retention => interval '2 days', p_batch_size => 4, "+hkRetentionOnly).More {
					break
				}
			}

			var workflows, executions int
			require.NoError(t, b.conn.QueryRow(b.ctx, `select
				(select count(*) from geneva.workflows) + (select count(*) from geneva.workflows_history),
				(select count(*) from geneva.step_executions) + (select count(*) from geneva.step_executions_history)`).Scan(&workflows, &executions))
			want := min(d+1, 2) * perDay
			require.Equal(t, want, workflows, "day %d", d)
			require.Equal(t, want, executions, "day %d", d)
		}
	})

	t.Run("KeepsOngoingWorkflowsOfAnyAge", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		ready := b.create(t, "ThreeSteps", "1")
		performing := b.create(t, "ThreeSteps", "2")
		b.run(t, performing)
		paused := b.create(t, "ThreeSteps", "3")
		b.call(t, "pause_workflow", paused)
		require.NotNil(t, b.workflow(t, paused).TransitionedAt, "a paused workflow has transitioned too")

		b.setNow(t, t0.Add(1000*24*time.Hour))
		counts := b.hkRound(t, hkRetentionOnly)

		require.Equal(t, hkCounts{}, counts)
		require.Equal(t, "ready", b.workflow(t, ready).State)
		require.Equal(t, "performing", b.workflow(t, performing).State)
		require.Equal(t, "paused", b.workflow(t, paused).State)
	})

	t.Run("KeepsYoungEndedWorkflows", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		old := b.hkFinished(t, "1")
		b.setNow(t, t0.Add(20*24*time.Hour))
		young := b.hkFinished(t, "2")
		youngCanceled := b.create(t, "One", "3")
		b.call(t, "cancel_workflow", youngCanceled)

		b.setNow(t, t0.Add(31*24*time.Hour))
		counts := b.hkRound(t, hkRetentionOnly)

		require.Equal(t, hkCounts{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1}, counts)
		require.Zero(t, b.hkWorkflowCount(t, old))
		require.Equal(t, 1, b.hkWorkflowCount(t, young))
		require.Equal(t, 1, b.hkExecutionCount(t, young))
		require.Equal(t, 1, b.hkWorkflowCount(t, youngCanceled))
	})

	t.Run("KeepForeverDeletesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		finished := b.hkFinished(t, "1")

		b.setNow(t, t0.Add(10000*24*time.Hour))
		counts := b.hkRound(t, "p_keep_forever => true, "+hkRetentionOnly)

		require.Equal(t, hkCounts{}, counts)
		require.Equal(t, 1, b.hkWorkflowCount(t, finished))
	})

	t.Run("NullRetentionIsTheSetting", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		finished := b.hkFinished(t, "1")

		b.setNow(t, t0.Add(31*24*time.Hour))
		counts := b.hkRound(t, "p_retention => null, "+hkRetentionOnly)

		require.Equal(t, hkCounts{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1}, counts, "the setting, 30 days")
		require.Zero(t, b.hkWorkflowCount(t, finished))
	})

	t.Run("RaisesForBadArguments", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		for _, c := range []struct {
			args string
			code string
		}{
			{"p_recovery_action => 'retry'", "22023"},
			{"p_recovery_action => ''", "22023"},
			{"p_batch_size => 0", "22023"},
			{"p_batch_size => -1", "22023"},
			{"p_keep_forever => null", "22004"},
			{"p_retention => interval '1 day', p_keep_forever => true", "22023"},
			{"p_retention => interval '-1 day'", "22023"},
			{"p_stuck_in_progress_after => interval '-1 minute'", "22023"},
			{"p_stuck_scheduled_after => interval '-1 second'", "22023"},
		} {
			_, err := b.hkTry(c.args)
			requireCode(t, err, c.code)
		}
	})

	t.Run("RecoversInBatches", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		var started []int64
		for i := 0; i < 3; i++ {
			started = append(started, b.run(t, b.create(t, "ThreeSteps", fmt.Sprint(i))).ExecutionID)
		}
		b.setNow(t, t0.Add(hours(2)))

		first := b.hkRound(t, "p_batch_size => 2")
		second := b.hkRound(t, "p_batch_size => 2")

		require.Equal(t, hkCounts{StuckInProgressRecovered: 2, More: true}, first)
		require.Equal(t, hkCounts{StuckInProgressRecovered: 1}, second)
		for _, id := range started {
			require.Equal(t, "recovered", deref(b.execution(t, id).Outcome))
		}
	})

	t.Run("RecoversStuckInProgressByCanceling", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		b.setNow(t, t0.Add(hours(2)))
		counts := b.hkRound(t, "p_recovery_action => 'cancel'")

		require.Equal(t, hkCounts{StuckInProgressRecovered: 1}, counts)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "canceled", got.State)
		require.Equal(t, "recovered", deref(got.Outcome))
		require.Equal(t, "stuck_in_progress", got.Metadata["recovery_reason"])
		require.Equal(t, t0.Add(hours(2)), deref(got.CanceledAt))
		wf := b.workflow(t, id)
		require.Equal(t, "canceled", wf.State)
		require.Equal(t, t0.Add(hours(2)), deref(wf.CanceledAt))
		b.noActive(t, id)
		require.Len(t, b.executions(t, id), 1)
	})

	t.Run("RecoversStuckInProgressByReattempting", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)

		b.setNow(t, t0.Add(30*time.Minute))
		require.Equal(t, hkCounts{}, b.hkRound(t, ""), "not stuck yet")
		require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State)

		b.setNow(t, t0.Add(hours(2)))
		counts := b.hkRound(t, "")

		require.Equal(t, hkCounts{StuckInProgressRecovered: 1}, counts)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "completed", got.State)
		require.Equal(t, "recovered", deref(got.Outcome))
		require.Equal(t, "stuck_in_progress", got.Metadata["recovery_reason"])
		require.Equal(t, t0.Add(hours(2)), deref(got.CompletedAt))
		next := b.active(t, id)
		require.NotEqual(t, started.ExecutionID, next.ID)
		require.Equal(t, "a", next.StepName)
		require.Equal(t, "scheduled", next.State)
		require.Equal(t, t0.Add(hours(2)), next.ScheduledFor, "scheduled now")
		require.Equal(t, int(started.Attempt)+1, b.hkAttempt(t, next.ID))
		require.Equal(t, 1, b.jobCount(t, next.ID))
		wf := b.workflow(t, id)
		require.Equal(t, "ready", wf.State)
		require.Nil(t, wf.CurrentStepName)
		require.Equal(t, "a", deref(wf.NextStepName))

		// the next round finds nothing more
		require.Equal(t, hkCounts{}, b.hkRound(t, ""))
		again := b.run(t, id)
		require.EqualValues(t, 2, again.Attempt)
	})

	t.Run("RecoversStuckScheduledByCanceling", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		execution := b.active(t, id)
		b.hkLoseJob(t, execution)

		b.setNow(t, t0.Add(20*time.Minute))
		counts := b.hkRound(t, "p_recovery_action => 'cancel'")

		require.Equal(t, hkCounts{StuckScheduledRecovered: 1}, counts)
		got := b.execution(t, execution.ID)
		require.Equal(t, "canceled", got.State)
		require.Equal(t, "recovered", deref(got.Outcome))
		require.Equal(t, "stuck_scheduled", got.Metadata["recovery_reason"])
		require.Equal(t, "canceled", b.workflow(t, id).State)
		b.noActive(t, id)
	})

	t.Run("RecoversStuckScheduledByReattempting", func(t *testing.T) {
		t.Parallel()

		for _, c := range []struct {
			name string
			lose string
		}{
			{"JobCompleted", "update public.river_job set state = 'completed', finalized_at = now() where id = $1"},
			{"JobDeleted", "delete from public.river_job where id = $1"},
			{"JobDiscarded", "update public.river_job set state = 'discarded', finalized_at = now() where id = $1"},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.setNow(t, t0)
				b.defineThreeSteps(t)
				id := b.create(t, "ThreeSteps", "1")
				execution := b.active(t, id)
				_, err := b.conn.Exec(b.ctx, c.lose, *execution.JobID)
				require.NoError(t, err)

				b.setNow(t, t0.Add(10*time.Minute))
				require.Equal(t, hkCounts{}, b.hkRound(t, ""), "not overdue long enough")

				b.setNow(t, t0.Add(20*time.Minute))
				counts := b.hkRound(t, "")

				require.Equal(t, hkCounts{StuckScheduledRecovered: 1}, counts)
				got := b.execution(t, execution.ID)
				require.Equal(t, "completed", got.State)
				require.Equal(t, "recovered", deref(got.Outcome))
				require.Equal(t, "stuck_scheduled", got.Metadata["recovery_reason"])
				require.Nil(t, got.StartedAt)
				next := b.active(t, id)
				require.NotEqual(t, execution.ID, next.ID)
				require.Equal(t, "a", next.StepName)
				require.Equal(t, t0.Add(20*time.Minute), next.ScheduledFor)
				require.Equal(t, 2, b.hkAttempt(t, next.ID))
				require.Equal(t, "available", b.job(t, *next.JobID).State, "a new job waits for it")
				require.Equal(t, "ready", b.workflow(t, id).State)
				require.Equal(t, hkCounts{}, b.hkRound(t, ""), "its new job waits")
			})
		}
	})

	t.Run("RecoveryAppliesRequestedCancel", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.call(t, "cancel_workflow", id)

		b.setNow(t, t0.Add(hours(2)))
		counts := b.hkRound(t, "")

		require.Equal(t, hkCounts{StuckInProgressRecovered: 1}, counts)
		require.Equal(t, "recovered", deref(b.execution(t, started.ExecutionID).Outcome))
		wf := b.workflow(t, id)
		require.Equal(t, "canceled", wf.State)
		require.Nil(t, wf.RequestedAction)
		b.noActive(t, id)
	})

	t.Run("RecoveryAppliesRequestedPause", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.call(t, "pause_workflow", id)

		b.setNow(t, t0.Add(hours(2)))
		counts := b.hkRound(t, "")

		require.Equal(t, hkCounts{StuckInProgressRecovered: 1}, counts)
		require.Equal(t, "recovered", deref(b.execution(t, started.ExecutionID).Outcome))
		wf := b.workflow(t, id)
		require.Equal(t, "paused", wf.State)
		require.Nil(t, wf.RequestedAction)
		kept := b.active(t, id)
		require.Equal(t, "a", kept.StepName)
		require.Nil(t, kept.JobID, "resume enqueues it")
		b.setNow(t, t0.Add(hours(10)))
		require.Equal(t, hkCounts{}, b.hkRound(t, ""), "a paused workflow's execution is kept")
	})

	t.Run("RecoveryCountsOverdueFromScheduledTime", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		execution := b.active(t, id) // b, due at t0 + 1h
		b.hkLoseJob(t, execution)

		b.setNow(t, t0.Add(hours(1)+10*time.Minute))
		require.Equal(t, hkCounts{}, b.hkRound(t, ""))
		require.Equal(t, "scheduled", b.execution(t, execution.ID).State)

		b.setNow(t, t0.Add(hours(1)+20*time.Minute))
		require.Equal(t, hkCounts{StuckScheduledRecovered: 1}, b.hkRound(t, ""))
		require.Equal(t, "b", b.active(t, id).StepName)
	})

	t.Run("ResumableStepIsStuckFromItsLastCheckpoint", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.setNow(t, t0.Add(50*time.Minute))
		var stop bool
		require.NoError(t, b.conn.QueryRow(b.ctx,
			`select geneva.checkpoint_step($1, '{"page": 3}')`, started.ExecutionID).Scan(&stop))
		require.False(t, stop)

		b.setNow(t, t0.Add(hours(1)+30*time.Minute))
		require.Equal(t, hkCounts{}, b.hkRound(t, ""), "it checkpointed within the hour")
		require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State)

		b.setNow(t, t0.Add(hours(2)))
		require.Equal(t, hkCounts{StuckInProgressRecovered: 1}, b.hkRound(t, ""))

		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "completed", got.State)
		require.Equal(t, "recovered", deref(got.Outcome))
		next := b.active(t, id)
		require.Equal(t, "a", next.StepName)
		require.JSONEq(t, `{"page": 3}`, string(next.Cursor), "the successor keeps the cursor")
		require.Equal(t, started.ExecutionID, deref(next.ContinuesFromID))
		require.Equal(t, 2, b.hkAttempt(t, next.ID))
		resumed := b.run(t, id)
		require.JSONEq(t, `{"page": 3}`, string(resumed.Cursor))
		require.Equal(t, started.ExecutionID, deref(resumed.ContinuesFromID))
	})

	t.Run("RetentionCountsFromWhenWorkflowEnded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		id := b.create(t, "One", "1")
		b.setNow(t, t0.Add(40*24*time.Hour))
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)

		b.setNow(t, t0.Add(41*24*time.Hour))
		require.Equal(t, hkCounts{}, b.hkRound(t, hkRetentionOnly), "created long ago, ended a day ago")
		require.Equal(t, 1, b.hkWorkflowCount(t, id))

		b.setNow(t, t0.Add(71*24*time.Hour))
		require.Equal(t, hkCounts{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1}, b.hkRound(t, hkRetentionOnly))
		require.Zero(t, b.hkWorkflowCount(t, id))
	})

	t.Run("RetentionIsAnArgument", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		id := b.hkFinished(t, "1")

		// (ended at noon: its day's partition ends at midnight, two hours ago)
		b.setNow(t, t0.Add(hours(14)))
		require.Equal(t, hkCounts{}, b.hkRound(t, "p_retention => interval '3 hours', "+hkRetentionOnly))
		require.Equal(t, hkCounts{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1}, b.hkRound(t, "p_retention => interval '1 hour', "+hkRetentionOnly))
		require.Zero(t, b.hkWorkflowCount(t, id))
	})

	t.Run("ReturnsExactlyTheCounts", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		raw, err := b.hkTry("")
		require.NoError(t, err)

		var got map[string]any
		require.NoError(t, json.Unmarshal(raw, &got))
		require.Equal(t, map[string]any{
			"workflows_cleaned_up":        float64(0),
			"step_executions_cleaned_up":  float64(0),
			"workflows_moved":             float64(0),
			"partitions_created":          float64(3),
			"partitions_dropped":          float64(0),
			"partitions_detached":         float64(0),
			"actions_cleaned_up":          float64(0),
			"idempotency_keys_cleaned_up": float64(0),
			"stuck_in_progress_recovered": float64(0),
			"stuck_scheduled_recovered":   float64(0),
			"orphans_repaired":            float64(0),
			"runaways_flagged":            float64(0),
			"more":                        false,
		}, got)
	})

	t.Run("SkipsLockedRows", func(t *testing.T) {
		t.Parallel()

		t.Run("EndedWorkflow", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.define(t, "One", `{"steps": [{"name": "only"}]}`)
			id := b.hkFinished(t, "1")
			b.setNow(t, t0.Add(31*24*time.Hour))
			holder := b.session(t)
			tx, err := holder.conn.Begin(b.ctx)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select 1 from geneva.workflows where id = $1 for update", id)
			require.NoError(t, err)
			_, err = b.conn.Exec(b.ctx, "set lock_timeout = '3s'")
			require.NoError(t, err)

			require.Equal(t, hkCounts{}, b.hkRound(t, ""), "returns without waiting")
			require.Equal(t, 1, b.hkWorkflowCount(t, id))

			require.NoError(t, tx.Rollback(b.ctx))
			require.Equal(t, hkCounts{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1}, b.hkRound(t, ""))
			require.Zero(t, b.hkWorkflowCount(t, id))
		})

		t.Run("ExecutionRow", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.defineThreeSteps(t)
			id := b.create(t, "ThreeSteps", "1")
			started := b.run(t, id)
			b.setNow(t, t0.Add(hours(2)))
			holder := b.session(t)
			tx, err := holder.conn.Begin(b.ctx)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select 1 from geneva.step_executions where id = $1 for update", started.ExecutionID)
			require.NoError(t, err)
			_, err = b.conn.Exec(b.ctx, "set lock_timeout = '3s'")
			require.NoError(t, err)

			require.Equal(t, hkCounts{}, b.hkRound(t, ""), "returns without waiting")
			require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State)
			require.Equal(t, "performing", b.workflow(t, id).State)

			require.NoError(t, tx.Rollback(b.ctx))
			require.Equal(t, hkCounts{StuckInProgressRecovered: 1}, b.hkRound(t, ""))
			require.Equal(t, "ready", b.workflow(t, id).State)
		})

		t.Run("StuckInProgress", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.defineThreeSteps(t)
			id := b.create(t, "ThreeSteps", "1")
			started := b.run(t, id)
			b.setNow(t, t0.Add(hours(2)))
			holder := b.session(t)
			tx, err := holder.conn.Begin(b.ctx)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select 1 from geneva.workflows where id = $1 for update", id)
			require.NoError(t, err)
			_, err = b.conn.Exec(b.ctx, "set lock_timeout = '3s'")
			require.NoError(t, err)

			require.Equal(t, hkCounts{}, b.hkRound(t, ""), "returns without waiting")
			require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State)
			require.Equal(t, "performing", b.workflow(t, id).State)

			require.NoError(t, tx.Commit(b.ctx))
			require.Equal(t, hkCounts{StuckInProgressRecovered: 1}, b.hkRound(t, ""))
			require.Equal(t, "recovered", deref(b.execution(t, started.ExecutionID).Outcome))
			require.Equal(t, "ready", b.workflow(t, id).State)
		})

		t.Run("StuckScheduledPausedThenCommitted", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.defineThreeSteps(t)
			id := b.create(t, "ThreeSteps", "1")
			execution := b.active(t, id)
			b.hkLoseJob(t, execution)
			b.setNow(t, t0.Add(hours(1)))
			operator := b.session(t)
			setNowOn(t, operator.conn, t0.Add(hours(1)))
			tx, err := operator.conn.Begin(b.ctx)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select geneva.pause_workflow($1)", id)
			require.NoError(t, err)
			_, err = b.conn.Exec(b.ctx, "set lock_timeout = '3s'")
			require.NoError(t, err)

			require.Equal(t, hkCounts{}, b.hkRound(t, ""), "returns without waiting")
			require.Equal(t, "scheduled", b.execution(t, execution.ID).State)

			require.NoError(t, tx.Commit(b.ctx))
			require.Equal(t, hkCounts{}, b.hkRound(t, ""), "a paused workflow's execution is kept")
			require.Equal(t, execution, b.execution(t, execution.ID))
			require.Equal(t, "paused", b.workflow(t, id).State)
		})

		t.Run("StuckScheduledPausedThenRolledBack", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.defineThreeSteps(t)
			id := b.create(t, "ThreeSteps", "1")
			execution := b.active(t, id)
			b.hkLoseJob(t, execution)
			b.setNow(t, t0.Add(hours(1)))
			operator := b.session(t)
			tx, err := operator.conn.Begin(b.ctx)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select geneva.pause_workflow($1)", id)
			require.NoError(t, err)
			_, err = b.conn.Exec(b.ctx, "set lock_timeout = '3s'")
			require.NoError(t, err)

			require.Equal(t, hkCounts{}, b.hkRound(t, ""), "returns without waiting")
			require.Equal(t, "scheduled", b.execution(t, execution.ID).State)

			require.NoError(t, tx.Rollback(b.ctx))
			require.Equal(t, hkCounts{StuckScheduledRecovered: 1}, b.hkRound(t, ""))
			require.Equal(t, "recovered", deref(b.execution(t, execution.ID).Outcome))
			require.Equal(t, "ready", b.workflow(t, id).State)
		})
	})

	t.Run("SlowWorkerAfterRecoveryChangesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		b.setNow(t, t0.Add(hours(2)))
		b.hkRound(t, "")
		recovered := b.execution(t, started.ExecutionID)
		next := b.active(t, id)

		got := b.complete(t, started.ExecutionID, "success", nil)

		require.Nil(t, got.Outcome, "nothing recorded")
		require.Equal(t, "ready", got.WorkflowState)
		require.Equal(t, recovered, b.execution(t, started.ExecutionID))
		require.Equal(t, next, b.active(t, id))
	})

	t.Run("StuckScheduledOfPausedWorkflowIsKept", func(t *testing.T) {
		t.Parallel()

		for _, action := range []string{"cancel", "reattempt"} {
			t.Run(strings.ToUpper(action[:1])+action[1:], func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.setNow(t, t0)
				b.defineThreeSteps(t)
				id := b.create(t, "ThreeSteps", "1")
				b.complete(t, b.run(t, id).ExecutionID, "success", nil)
				kept := b.active(t, id) // b, due at t0 + 1h
				b.call(t, "pause_workflow", id)
				b.hkLoseJob(t, kept)
				kept = b.execution(t, kept.ID)

				b.setNow(t, t0.Add(1000*24*time.Hour))
				counts := b.hkRound(t, fmt.Sprintf("p_recovery_action => '%s', p_stuck_scheduled_after => interval '0'", action))

				require.Equal(t, hkCounts{}, counts)
				require.Equal(t, kept, b.execution(t, kept.ID))
				require.Equal(t, "paused", b.workflow(t, id).State)
			})
		}
	})

	t.Run("StuckScheduledWithWaitingJobIsRecoveredInPlace", func(t *testing.T) {
		t.Parallel()

		// a queue far behind, or a worker snoozing the job (a deploy lacks
		// the step): late, not lost. Recovered once, without a new row or an
		// attempt, then left until its new due time passes the threshold
		// again; the job keeps its place.
		for _, state := range []string{"available", "scheduled", "retryable"} {
			t.Run(strings.ToUpper(state[:1])+state[1:], func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.setNow(t, t0)
				b.defineThreeSteps(t)
				id := b.create(t, "ThreeSteps", "1")
				execution := b.active(t, id)
				_, err := b.conn.Exec(b.ctx,
					"update public.river_job set state = $2::text::public.river_job_state, scheduled_at = scheduled_at - interval '1 day' where id = $1",
					*execution.JobID, state)
				require.NoError(t, err)
				job := b.job(t, *execution.JobID)

				b.setNow(t, t0.Add(hours(5)))
				require.Equal(t, hkCounts{StuckScheduledRecovered: 1}, b.hkRound(t, ""), "a queue hours behind is stuck too")

				recovered := b.execution(t, execution.ID)
				require.Equal(t, "scheduled", recovered.State, "the same execution")
				require.Equal(t, t0.Add(hours(5)), recovered.ScheduledFor, "due now")
				require.EqualValues(t, 1, recovered.Metadata["queue_lag_recoveries"])
				require.Equal(t, 1, b.hkAttempt(t, execution.ID), "no attempt counted")
				require.Equal(t, 1, b.hkExecutionCount(t, id), "no row added")
				require.Equal(t, job, b.job(t, *execution.JobID), "the job keeps its place")

				// left alone until due + threshold (15 minutes) again
				for _, after := range []time.Duration{time.Second, 10 * time.Minute, 15 * time.Minute} {
					b.setNow(t, t0.Add(hours(5)+after))
					require.Equal(t, hkCounts{}, b.hkRound(t, ""), "%s later", after)
				}
				b.setNow(t, t0.Add(hours(5)+16*time.Minute))
				require.Equal(t, hkCounts{StuckScheduledRecovered: 1}, b.hkRound(t, ""))
				again := b.execution(t, execution.ID)
				require.Equal(t, t0.Add(hours(5)+16*time.Minute), again.ScheduledFor)
				require.EqualValues(t, 2, again.Metadata["queue_lag_recoveries"])
				first, err := time.Parse(time.RFC3339Nano, again.Metadata["first_scheduled_for"].(string))
				require.NoError(t, err)
				require.True(t, first.Equal(t0), "the first due time is kept: %s", first)
				require.Equal(t, 1, b.hkExecutionCount(t, id), "still one row")
				require.Equal(t, 1, b.hkAttempt(t, execution.ID))
			})
		}
	})
}
