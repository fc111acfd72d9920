package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// defineFailing defines "Failing": steps a (with the given on_exception
// policy, or none when it is empty) and b.
func (b *testBundle) defineFailing(t *testing.T, policy string) {
	t.Helper()
	onException := ""
	if policy != "" {
		onException = `, "on_exception": ` + policy
	}
	b.define(t, "Failing", `{"steps": [{"name": "a"`+onException+`}, {"name": "b"}]}`)
}

func TestFailStep(t *testing.T) {
	t.Parallel()

	t.Run("BackoffGrowsWaitUpToMaxWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, `{"action": "reattempt", "wait": "10 seconds", "backoff": 2, "max_wait": "1 minute", "max_reattempts": null}`)
		id := b.create(t, "Failing", "1")

		var waits []time.Duration
		for range 5 {
			started := b.run(t, id)
			b.fail(t, started.ExecutionID, []string{"Boom"}, "boom")
			next := b.active(t, id)
			waits = append(waits, next.ScheduledFor.Sub(started.StartedAt))
			b.setNow(t, next.ScheduledFor)
		}

		require.Equal(t, []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}, waits)
	})

	t.Run("BackoffResetsWithSuccessAndDefaultsToADayCap", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Failing", `{"steps": [{"name": "a", "on_exception": {"action": "reattempt", "wait": "1 hour", "backoff": 100, "max_reattempts": null}}]}`)
		id := b.create(t, "Failing", "1")

		started := b.run(t, id)
		b.fail(t, started.ExecutionID, []string{"Boom"}, "boom")
		require.Equal(t, hours(1), b.active(t, id).ScheduledFor.Sub(started.StartedAt))
		b.setNow(t, b.active(t, id).ScheduledFor)
		started = b.run(t, id)
		b.fail(t, started.ExecutionID, []string{"Boom"}, "boom")

		require.Equal(t, hours(24), b.active(t, id).ScheduledFor.Sub(started.StartedAt), "100 hours, capped at a day")
		var wait time.Duration
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva._backoff_wait('{"wait": "1 hour", "backoff": 100}', 100000)`).Scan(&wait))
		require.Equal(t, hours(24), wait, "no overflow however many reattempts")
	})

	t.Run("CancelPolicyCancelsWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, `{"action": "cancel"}`)
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)

		result := b.fail(t, started.ExecutionID, []string{"CardDeclined"}, "declined")

		require.Equal(t, failed{Action: ptr("cancel"), Outcome: ptr("canceled_by_exception"), Report: true, WorkflowState: "canceled"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "failed", got.State)
		require.Equal(t, t0, deref(got.FailedAt))
		require.Equal(t, "CardDeclined", deref(got.ErrorClassName))
		wf := b.workflow(t, id)
		require.Equal(t, "canceled", wf.State)
		b.noActive(t, id)
	})

	t.Run("DefaultPausesAndRecordsError", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)

		result := b.fail(t, started.ExecutionID, []string{"*url.Error", "*net.OpError", "Timeout"}, "dial tcp: i/o timeout")

		require.Equal(t, failed{Action: ptr("pause"), Outcome: ptr("paused_by_exception"), Report: true, WorkflowState: "paused"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "failed", got.State)
		require.Equal(t, "paused_by_exception", deref(got.Outcome))
		require.Equal(t, "*url.Error", deref(got.ErrorClassName), "the outermost error's type")
		require.Equal(t, "dial tcp: i/o timeout", deref(got.ErrorMessage))
		require.Equal(t, "stack trace", deref(got.ErrorBacktrace))
		require.Equal(t, t0, deref(got.FailedAt))
		require.Equal(t, []any{"*url.Error", "*net.OpError", "Timeout"}, got.Metadata["error_classes"])
		require.Equal(t, "default", got.Metadata["policy"].(map[string]any)["level"])
		wf := b.workflow(t, id)
		require.Equal(t, "paused", wf.State)
		require.Equal(t, "a", deref(wf.NextStepName))
		require.Nil(t, wf.CurrentStepName)
		require.Equal(t, t0, deref(wf.PausedAt))
		b.noActive(t, id)

		// resume schedules the failed step anew, now
		b.setNow(t, t0.Add(hours(1)))
		b.call(t, "resume_workflow", id)
		again := b.active(t, id)
		require.Equal(t, "a", again.StepName)
		require.Equal(t, t0.Add(hours(1)), again.ScheduledFor)
	})

	t.Run("ExhaustedReattemptsApplyTerminalAction", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			terminal string
			action   string
			state    string
		}{
			{"", "pause", "paused"},
			{`, "terminal_action": "pause"`, "pause", "paused"},
			{`, "terminal_action": "cancel"`, "cancel", "canceled"},
			{`, "terminal_action": "skip"`, "skip", "ready"},
		} {
			t.Run(c.action+c.terminal, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.setNow(t, t0)
				b.defineFailing(t, `{"action": "reattempt", "max_reattempts": 2`+c.terminal+`}`)
				id := b.create(t, "Failing", "1")

				for i := 0; i < 2; i++ {
					result := b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")
					require.Equal(t, "reattempted_by_exception", deref(result.Outcome))
				}
				started := b.run(t, id)
				result := b.fail(t, started.ExecutionID, []string{"Boom"}, "boom")

				require.Equal(t, failed{Action: ptr(c.action), Outcome: ptr("reattempts_exhausted"), Report: true, WorkflowState: c.state}, result)
				got := b.execution(t, started.ExecutionID)
				require.Equal(t, "failed", got.State)
				require.Equal(t, "Boom", deref(got.ErrorClassName))
				require.EqualValues(t, 2, got.Metadata["consecutive_reattempts"])
				require.Len(t, b.executions(t, id), 3+map[string]int{"skip": 1}[c.action], "N allows N reattempts")
				if c.action == "skip" {
					require.Equal(t, "b", b.active(t, id).StepName)
				}
			})
		}
	})

	t.Run("GlobalCapWithAlternatingErrors", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			last  string
			state string
		}{{"Timeout", "paused"}, {"RateLimited", "canceled"}} {
			t.Run(c.last, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.defineFailing(t, `[
					{"action": "reattempt", "matching": ["Timeout"], "max_reattempts": 10},
					{"action": "reattempt", "matching": ["RateLimited"], "max_reattempts": 3, "terminal_action": "cancel"}
				]`)
				id := b.create(t, "Failing", "1")

				for _, class := range []string{"Timeout", "RateLimited", "Timeout"} {
					result := b.fail(t, b.run(t, id).ExecutionID, []string{class}, "boom")
					require.Equal(t, "reattempted_by_exception", deref(result.Outcome))
				}
				result := b.fail(t, b.run(t, id).ExecutionID, []string{c.last}, "boom")

				require.Equal(t, "reattempts_exhausted", deref(result.Outcome), "the list's cap is the smallest, 3")
				require.Equal(t, c.state, result.WorkflowState, "the failing error's own terminal action")
			})
		}
	})

	// A running step's error ends as every end of a running execution does
	// (geneva._end_running): with a limit, its workflow's next step, due
	// now, waits behind the key's waiters at once, without a job, as after
	// a success, and the freed slot goes to the oldest waiter.
	t.Run("EndsThroughTheOnePathWithLimits", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 1},
			"steps": [{"name": "a", "on_exception": {"action": "skip"}}, {"name": "b"}]}`)
		first := b.createIn(t, "Sync", "1", "acme")
		second := b.createIn(t, "Sync", "2", "acme")
		running := b.run(t, first)
		waiter := b.active(t, second)
		_, ok := b.startStep(t, waiter.ID, nil)
		require.False(t, ok, "acme is full")

		require.Equal(t, failed{Action: ptr("skip"), Outcome: ptr("skipped_by_exception"), Report: true, WorkflowState: "ready"},
			b.fail(t, running.ExecutionID, []string{"Boom"}, "boom"))
		woken := b.limitState(t, waiter.ID)
		require.Nil(t, woken.LimitWaitKey, "the oldest waiter holds the freed slot")
		require.Equal(t, []string{`["concurrency", "Sync", "acme"]`}, woken.LimitKeys)
		next := b.active(t, first)
		require.Equal(t, "b", next.StepName)
		require.Equal(t, `["concurrency", "Sync", "acme"]`, deref(b.limitState(t, next.ID).LimitWaitKey), "first's b waits behind")
		require.Equal(t, 0, b.jobCount(t, next.ID), "without a job")
		require.Equal(t, "Boom", deref(b.execution(t, running.ExecutionID).ErrorClassName))
	})

	t.Run("HandlerDecidesInTwoCalls", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, `{"handler": "smart_retry", "report": "never"}`)
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)

		ask, err := b.tryFail(started.ExecutionID, []string{"RateLimited"}, "slow down", nil, nil)
		require.NoError(t, err)
		require.Equal(t, failed{Action: ptr("handler"), WorkflowState: "performing", Handler: ptr("smart_retry")}, ask)
		require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State, "nothing recorded yet")

		decided, err := b.tryFail(started.ExecutionID, []string{"RateLimited"}, "slow down", ptr("reattempt"), ptr(30*time.Second))
		require.NoError(t, err)
		require.Equal(t, failed{Action: ptr("reattempt"), Outcome: ptr("reattempted_by_exception"), Report: false, WorkflowState: "ready", Handler: ptr("smart_retry")}, decided)
		next := b.active(t, id)
		require.Equal(t, t0.Add(30*time.Second), next.ScheduledFor)
		require.Equal(t, "RateLimited", deref(b.execution(t, started.ExecutionID).ErrorClassName))
	})

	t.Run("HandlerDecisionWithoutHandlerIsRejected", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)

		_, err := b.tryFail(started.ExecutionID, []string{"Boom"}, "boom", ptr("skip"), nil)
		requireCode(t, err, "22023")
		_, err = b.tryFail(started.ExecutionID, []string{"Boom"}, "boom", ptr("success"), nil)
		requireCode(t, err, "22023")
		require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State)
	})

	t.Run("HandlerWaitBeyond100YearsIsRejected", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFailing(t, `{"handler": "decide"}`)
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)

		_, err := b.tryFail(started.ExecutionID, []string{"Boom"}, "boom", ptr("reattempt"), ptr(101*365*hours(24)))
		pgErr := requireCode(t, err, "22023")
		require.Contains(t, pgErr.Message, "too long")
		require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State)
	})

	t.Run("PreconditionErrorGoesThroughPolicy", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, `{"action": "reattempt", "wait": "5 minutes"}`)
		id := b.create(t, "Failing", "1")
		execution := b.active(t, id)

		// cancel_if raised before start_step: the execution is still scheduled
		result := b.failPrecondition(t, execution.ID, []string{"HeroLookupError"}, "db down")

		require.Equal(t, "reattempted_by_exception", deref(result.Outcome))
		got := b.execution(t, execution.ID)
		require.Equal(t, "completed", got.State)
		require.Nil(t, got.StartedAt)
		require.Equal(t, "precondition", got.Metadata["reattempt_reason"])
		next := b.active(t, id)
		require.Equal(t, t0.Add(5*time.Minute), next.ScheduledFor)
		require.Nil(t, b.workflow(t, id).StartedAt, "the workflow never performed")
	})

	t.Run("PreconditionErrorOfEarlyJobKeepsAJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		execution := b.active(t, id)
		// the execution is due later; its job ran early and is gone
		b.define(t, "Failing", `{"steps": [{"name": "a"}, {"name": "b", "wait": "1 hour"}]}`)
		_, err := b.conn.Exec(b.ctx, "delete from public.river_job where id = $1", *execution.JobID)
		require.NoError(t, err)
		_, err = b.conn.Exec(b.ctx, "update geneva.step_executions set scheduled_for = $2 where id = $1", execution.ID, t0.Add(hours(1)))
		require.NoError(t, err)

		result := b.failPrecondition(t, execution.ID, []string{"Boom"}, "boom")

		require.Equal(t, failed{WorkflowState: "ready"}, result)
		got := b.execution(t, execution.ID)
		require.Equal(t, "scheduled", got.State)
		require.Equal(t, "scheduled", b.job(t, *got.JobID).State, "a new job for its time")
	})

	t.Run("PreconditionErrorOfPausedWorkflowRecordsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		execution := b.active(t, id)
		b.call(t, "pause_workflow", id)

		result := b.failPrecondition(t, execution.ID, []string{"Boom"}, "boom")

		require.Equal(t, failed{WorkflowState: "paused"}, result)
		require.Equal(t, execution, b.execution(t, execution.ID))
	})

	t.Run("PreconditionErrorNeverTouchesRunningStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		// a duplicate job's cancel_if fails while another worker runs the step
		started := b.run(t, id)

		result := b.failPrecondition(t, started.ExecutionID, []string{"Boom"}, "boom")

		require.Equal(t, failed{WorkflowState: "performing"}, result)
		require.Equal(t, "in_progress", b.execution(t, started.ExecutionID).State)
		require.Equal(t, "success", deref(b.complete(t, started.ExecutionID, "success", nil).Outcome))
	})

	t.Run("StepErrorNeverTouchesScheduledExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		execution := b.active(t, id)

		result := b.fail(t, execution.ID, []string{"Boom"}, "boom")

		require.Equal(t, failed{WorkflowState: "ready"}, result)
		require.Equal(t, execution, b.execution(t, execution.ID))
	})

	t.Run("RaisesForUnknownExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.tryFail(12345, []string{"Boom"}, "boom", nil, nil)
		requireCode(t, err, "P0002")
		_, err = b.conn.Exec(b.ctx, "select * from geneva.fail_step(null, '{Boom}', 'boom')")
		requireCode(t, err, "22004")
	})

	t.Run("MostRecentWorkflowPolicyWins", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Layered", `{
			"steps": [{"name": "a"}],
			"on_exception": [
				{"action": "cancel", "matching": ["Timeout"]},
				{"action": "pause"},
				{"action": "skip", "matching": ["Timeout"]},
				{"action": "reattempt"}
			]
		}`)

		cases := []struct {
			classes []string
			action  string
		}{
			{[]string{"Timeout"}, "skip"},          // the most recent specific match
			{[]string{"Other"}, "reattempt"},       // the most recent blanket
			{[]string{"Other", "Timeout"}, "skip"}, // a specific match beats any blanket
		}
		for i, c := range cases {
			id := b.create(t, "Layered", fmt.Sprint(i))
			result := b.fail(t, b.run(t, id).ExecutionID, c.classes, "boom")
			require.Equal(t, c.action, deref(result.Action), "case %d", i)
		}
	})

	t.Run("ReattemptCountResetsOnSuccessNotOnFlowControl", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, `{"action": "reattempt", "max_reattempts": 2}`)
		id := b.create(t, "Failing", "1")

		// two exception reattempts, with a flow-control reattempt between them
		b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")
		b.complete(t, b.run(t, id).ExecutionID, "reattempt", nil)
		b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")
		result := b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")
		require.Equal(t, "reattempts_exhausted", deref(result.Outcome), "flow-control reattempts neither count nor reset")

		// after exhaustion, each resume grants one more attempt
		b.call(t, "resume_workflow", id)
		result = b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")
		require.Equal(t, "reattempts_exhausted", deref(result.Outcome))
	})

	t.Run("ReattemptDefaultCapIs100AtStepLevel", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, `{"action": "reattempt"}`)
		id := b.create(t, "Failing", "1")

		for i := 0; i < 100; i++ {
			result := b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")
			require.Equal(t, "reattempted_by_exception", deref(result.Outcome), "attempt %d", i+1)
		}
		result := b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")

		require.Equal(t, "reattempts_exhausted", deref(result.Outcome))
		require.Equal(t, "paused", result.WorkflowState)
	})

	t.Run("ReattemptUnlimitedWithNull", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, `{"action": "reattempt", "max_reattempts": null}`)
		id := b.create(t, "Failing", "1")
		// as if 150 reattempts had happened already
		for i := 0; i < 150; i++ {
			b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")
		}

		result := b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")

		require.Equal(t, "reattempted_by_exception", deref(result.Outcome))
	})

	t.Run("ReattemptWaitsPolicyWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Failing", `{"steps": [{"name": "a"}, {"name": "b", "wait": "1 day", "on_exception": {"action": "reattempt", "wait": "30 seconds"}}]}`)
		id := b.create(t, "Failing", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		b.setNow(t, t0.Add(hours(24)))
		started := b.run(t, id)

		result := b.fail(t, started.ExecutionID, []string{"Boom"}, "boom")

		require.Equal(t, failed{Action: ptr("reattempt"), Outcome: ptr("reattempted_by_exception"), Report: true, WorkflowState: "ready"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "completed", got.State)
		require.Equal(t, "Boom", deref(got.ErrorClassName), "error columns are written on reattempts too")
		require.Equal(t, "exception_policy", got.Metadata["reattempt_reason"])
		next := b.active(t, id)
		require.Equal(t, "b", next.StepName)
		require.Equal(t, t0.Add(hours(24)+30*time.Second), next.ScheduledFor, "the policy's wait, not the step's")
		b.setNow(t, t0.Add(hours(24)+29*time.Second))
		_, ok := b.startStep(t, next.ID, nil)
		require.False(t, ok)
		b.setNow(t, t0.Add(hours(24)+30*time.Second))
		_, ok = b.startStep(t, next.ID, nil)
		require.True(t, ok)
	})

	t.Run("RecordsNothingWhenNoLongerInProgress", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFailing(t, "")
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)
		b.complete(t, started.ExecutionID, "success", nil)
		before := b.executions(t, id)

		result := b.fail(t, started.ExecutionID, []string{"Boom"}, "boom")

		require.Equal(t, failed{WorkflowState: "ready"}, result)
		require.Equal(t, before, b.executions(t, id))
	})

	t.Run("ReportFollowsPolicy", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			policy  string
			reports []bool // for each failure until the workflow stops
		}{
			{`{"action": "reattempt", "max_reattempts": 1}`, []bool{true, true}},
			{`{"action": "reattempt", "max_reattempts": 1, "report": "always"}`, []bool{true, true}},
			{`{"action": "reattempt", "max_reattempts": 1, "report": "never"}`, []bool{false, false}},
			{`{"action": "reattempt", "max_reattempts": 1, "report": "terminal_only"}`, []bool{false, true}},
			{`{"action": "pause", "report": "terminal_only"}`, []bool{true}},
			{`{"action": "skip", "report": "never"}`, []bool{false}},
		} {
			t.Run(c.policy, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.defineFailing(t, c.policy)
				id := b.create(t, "Failing", "1")
				for i, want := range c.reports {
					result := b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom")
					require.Equal(t, want, result.Report, "failure %d", i+1)
				}
			})
		}
	})

	t.Run("SkipPolicySchedulesNextStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFailing(t, `{"action": "skip"}`)
		id := b.create(t, "Failing", "1")
		started := b.run(t, id)

		result := b.fail(t, started.ExecutionID, []string{"Boom"}, "boom")

		require.Equal(t, failed{Action: ptr("skip"), Outcome: ptr("skipped_by_exception"), Report: true, WorkflowState: "ready"}, result)
		got := b.execution(t, started.ExecutionID)
		require.Equal(t, "skipped", got.State)
		require.Equal(t, t0, deref(got.SkippedAt))
		require.Equal(t, "Boom", deref(got.ErrorClassName))
		require.Equal(t, "b", b.active(t, id).StepName)
	})

	t.Run("StepPolicyWinsOverWorkflowPolicies", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Layered", `{
			"steps": [
				{"name": "single", "on_exception": {"action": "skip"}},
				{"name": "listed", "on_exception": [
					{"action": "cancel", "matching": ["Fatal"]},
					{"action": "reattempt", "matching": ["Timeout"], "max_reattempts": 3}
				]},
				{"name": "plain"}
			],
			"on_exception": [
				{"action": "reattempt", "matching": ["Timeout"]},
				{"action": "cancel"},
				{"action": "skip"}
			]
		}`)

		cases := []struct {
			step    string
			classes []string
			action  string
			level   string
		}{
			{"single", []string{"Timeout"}, "skip", "step"},            // a single step policy wins outright
			{"listed", []string{"Wrapper", "Fatal"}, "cancel", "step"}, // a specific list entry matches any class
			{"listed", []string{"Timeout"}, "reattempt", "step"},
			{"listed", []string{"Other"}, "skip", "workflow"},       // no list match: most recent blanket
			{"plain", []string{"Timeout"}, "reattempt", "workflow"}, // workflow specific beats blanket
			{"plain", []string{"Other"}, "skip", "workflow"},
		}
		for i, c := range cases {
			id := b.create(t, "Layered", fmt.Sprint(i))
			b.setNow(t, t0)
			for b.active(t, id).StepName != c.step {
				b.complete(t, b.run(t, id).ExecutionID, "skip", nil)
			}
			started := b.run(t, id)
			result := b.fail(t, started.ExecutionID, c.classes, "boom")
			require.Equal(t, c.action, deref(result.Action), "case %d", i)
			require.Equal(t, c.level, b.execution(t, started.ExecutionID).Metadata["policy"].(map[string]any)["level"], "case %d", i)
		}
	})
}

// TestExceptionEffect pins the one decision of what a step's error does
// (geneva._exception_effect), which fail_step (a running step's and a
// precondition's error) and every batch of ends share: the policy's action,
// its cap and terminal action, its backoff, the least wait an error asks
// for, a handler's ask and decision, and whether to report.
func TestExceptionEffect(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.define(t, "Effects", `{"steps": [
		{"name": "capped", "on_exception": {"action": "reattempt", "wait": "10 seconds", "max_reattempts": 2, "terminal_action": "skip", "report": "terminal_only"}},
		{"name": "backoff", "on_exception": {"action": "reattempt", "wait": "10 seconds", "backoff": 2, "max_reattempts": null}},
		{"name": "handled", "on_exception": {"handler": "decide"}},
		{"name": "plain"}
	]}`)

	type effect struct {
		Cause    string
		Signal   *string
		Wait     *time.Duration
		Metadata map[string]any
		Report   *bool
		Handler  *string
	}
	effectOf := func(step string, reattempts int, decision *string, decisionWait, atLeast *time.Duration, precondition bool) (effect, error) {
		var e effect
		err := b.conn.QueryRow(b.ctx, `select cause, signal, wait, metadata, report, handler
			from geneva._exception_effect(
				(select d from geneva.workflow_definitions d where d.workflow_type = 'Effects'),
				$1, array['Boom'], $2, $3, $4, $5, $6)`,
			step, reattempts, decision, decisionWait, atLeast, precondition,
		).Scan(&e.Cause, &e.Signal, &e.Wait, &e.Metadata, &e.Report, &e.Handler)
		return e, err
	}
	must := func(step string, reattempts int, decision *string, decisionWait, atLeast *time.Duration, precondition bool) effect {
		t.Helper()
		e, err := effectOf(step, reattempts, decision, decisionWait, atLeast, precondition)
		require.NoError(t, err)
		return e
	}

	// under the cap: a reattempt after the policy's wait, not reported
	// (terminal_only)
	e := must("capped", 1, nil, nil, nil, false)
	require.Equal(t, "exception", e.Cause)
	require.Equal(t, "reattempt", deref(e.Signal))
	require.Equal(t, 10*time.Second, deref(e.Wait))
	require.False(t, deref(e.Report))
	require.Equal(t, "exception_policy", e.Metadata["reattempt_reason"])
	require.Equal(t, []any{"Boom"}, e.Metadata["error_classes"])
	require.NotContains(t, e.Metadata, "consecutive_reattempts")

	// at the cap: the terminal action, exhausted, without a wait, reported
	e = must("capped", 2, nil, nil, nil, false)
	require.Equal(t, "exhausted", e.Cause)
	require.Equal(t, "skip", deref(e.Signal))
	require.Nil(t, e.Wait)
	require.True(t, deref(e.Report))
	require.Equal(t, float64(2), e.Metadata["consecutive_reattempts"])
	require.NotContains(t, e.Metadata, "reattempt_reason")

	// the backoff grows with the reattempts; a longer least wait wins and
	// is recorded; a precondition's reattempt says so
	require.Equal(t, 80*time.Second, deref(must("backoff", 3, nil, nil, nil, false).Wait))
	e = must("backoff", 0, nil, nil, ptr(time.Minute), true)
	require.Equal(t, time.Minute, deref(e.Wait))
	require.Equal(t, "00:01:00", e.Metadata["wait_at_least"])
	require.Equal(t, "precondition", e.Metadata["reattempt_reason"])
	require.Equal(t, 10*time.Second, deref(must("backoff", 0, nil, nil, ptr(time.Second), false).Wait), "a shorter least wait changes nothing")

	// the default pauses; a least wait applies only to a reattempt
	e = must("plain", 0, nil, nil, ptr(time.Minute), false)
	require.Equal(t, "pause", deref(e.Signal))
	require.Nil(t, e.Wait)
	require.NotContains(t, e.Metadata, "wait_at_least")
	require.True(t, deref(e.Report))

	// a handler: asked first (no signal), then its decision, uncapped
	e = must("handled", 0, nil, nil, nil, false)
	require.Nil(t, e.Signal)
	require.Equal(t, "decide", deref(e.Handler))
	e = must("handled", 1000, ptr("reattempt"), ptr(5*time.Second), nil, false)
	require.Equal(t, "exception", e.Cause)
	require.Equal(t, "reattempt", deref(e.Signal))
	require.Equal(t, 5*time.Second, deref(e.Wait))

	// a decision where no handler applies
	_, err := effectOf("plain", 0, ptr("skip"), nil, nil, false)
	requireCode(t, err, "22023")
}
