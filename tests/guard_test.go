package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// The states in alphabetical order, so that the generated subtests are too.
var (
	guardWorkflowStates  = []string{"canceled", "finished", "paused", "performing", "ready"}
	guardExecutionStates = []string{"canceled", "completed", "failed", "in_progress", "scheduled", "skipped"}
)

// guardLegalWorkflow lists the legal workflow transitions, as the header of
// sql/guards/workflows_guard_state.sql states them.
var guardLegalWorkflow = map[[2]string]bool{
	{"ready", "performing"}: true, {"ready", "paused"}: true, {"ready", "finished"}: true, {"ready", "canceled"}: true,
	{"performing", "ready"}: true, {"performing", "paused"}: true, {"performing", "finished"}: true, {"performing", "canceled"}: true,
	{"paused", "ready"}: true, {"paused", "finished"}: true, {"paused", "canceled"}: true,
}

// guardLegalExecution lists the legal execution transitions, as the header of
// sql/guards/step_executions_guard_state.sql states them.
var guardLegalExecution = map[[2]string]bool{
	{"scheduled", "in_progress"}: true, {"scheduled", "completed"}: true, {"scheduled", "failed"}: true,
	{"scheduled", "canceled"}: true, {"scheduled", "skipped"}: true,
	{"in_progress", "completed"}: true, {"in_progress", "failed"}: true,
	{"in_progress", "canceled"}: true, {"in_progress", "skipped"}: true,
}

// guardOutcomes gives each execution state the outcome a direct update writes
// with it: one its CHECK constraint allows, and the one the engine gave the
// executions guardExecutionIn makes, so that an update to the same state
// changes nothing.
var guardOutcomes = map[string]*string{
	"scheduled":   nil,
	"in_progress": nil,
	"completed":   ptr("success"),
	"failed":      ptr("paused_by_exception"),
	"canceled":    ptr("canceled_externally"),
	"skipped":     ptr("skipped_externally"),
}

// guardCamel turns "in_progress" into "InProgress".
func guardCamel(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "")
}

// guardWorkflowIn creates a ThreeSteps workflow and brings it to state through
// the engine's functions.
func (b *testBundle) guardWorkflowIn(t *testing.T, state, heroID string) int64 {
	t.Helper()
	id := b.create(t, "ThreeSteps", heroID)
	switch state {
	case "ready":
	case "performing":
		b.run(t, id)
	case "paused":
		b.call(t, "pause_workflow", id)
	case "finished":
		b.complete(t, b.run(t, id).ExecutionID, "finished", nil)
	case "canceled":
		b.call(t, "cancel_workflow", id)
	default:
		t.Fatalf("unknown workflow state %s", state)
	}
	require.Equal(t, state, b.workflow(t, id).State)
	return id
}

// guardExecutionIn creates a ThreeSteps workflow and brings the execution of
// its first step to state through the engine's functions; ended executions
// get the outcome of guardOutcomes.
func (b *testBundle) guardExecutionIn(t *testing.T, state, heroID string) int64 {
	t.Helper()
	id := b.create(t, "ThreeSteps", heroID)
	execution := b.active(t, id)
	switch state {
	case "scheduled":
	case "in_progress":
		b.run(t, id)
	case "completed":
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
	case "failed":
		b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom") // the default policy pauses
	case "canceled":
		b.call(t, "cancel_workflow", id)
	case "skipped":
		b.call(t, "skip_step", id)
	default:
		t.Fatalf("unknown execution state %s", state)
	}
	got := b.execution(t, execution.ID)
	require.Equal(t, state, got.State)
	require.Equal(t, guardOutcomes[state], got.Outcome)
	return execution.ID
}

// guardSetWorkflowState updates a workflow's state by hand. It also clears
// current_step_name and requested_action, which NULL suits in every state,
// and sets paused_at, finished_at and canceled_at as the target state
// requires: so the CHECK constraint workflows_state_valid holds for any
// target and only the guard can refuse the update.
func (b *testBundle) guardSetWorkflowState(id int64, state string) error {
	_, err := b.conn.Exec(b.ctx, `update geneva.workflows
		set state = $2::text, current_step_name = null, requested_action = null,
		  paused_at = case when $2::text = 'paused' then coalesce(paused_at, geneva.now()) end,
		  finished_at = case when $2::text = 'finished' then coalesce(finished_at, geneva.now()) end,
		  canceled_at = case when $2::text = 'canceled' then coalesce(canceled_at, geneva.now()) end
		where id = $1`, id, state)
	return err
}

// guardSetExecutionState updates an execution's state and outcome by hand,
// with started_at and finished_at as the target state requires (the CHECK
// constraint step_executions_state_valid then holds), so that only
// the guard can refuse the update (or the one active execution a workflow:
// see guardOtherActive).
func (b *testBundle) guardSetExecutionState(id int64, state string, outcome *string) error {
	_, err := b.conn.Exec(b.ctx, `update geneva.step_executions
		set state = $2::text,
		  outcome = $3,
		  started_at = case when $2::text = 'in_progress' then coalesce(started_at, geneva.now()) else started_at end,
		  finished_at = case when $2::text in ('scheduled', 'in_progress') then null
		    else coalesce(finished_at, geneva.now()) end
		where id = $1`, id, state, outcome)
	return err
}

// guardOtherActive says whether the execution's workflow has another active
// (scheduled or in_progress) execution.
func (b *testBundle) guardOtherActive(t *testing.T, id int64) bool {
	t.Helper()
	var other bool
	require.NoError(t, b.conn.QueryRow(b.ctx, `select exists (
		select from geneva.step_executions o
		join geneva.step_executions e on e.workflow_id = o.workflow_id
		where e.id = $1 and o.id <> $1 and o.state in ('scheduled', 'in_progress'))`, id).Scan(&other))
	return other
}

func (b *testBundle) guardExec(t *testing.T, sql string, args ...any) {
	t.Helper()
	_, err := b.conn.Exec(b.ctx, sql, args...)
	require.NoError(t, err)
}

func TestGuardState(t *testing.T) {
	t.Parallel()

	t.Run("EndedExecutionKeepsItsOutcome", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			state   string
			outcome *string
		}{
			{"canceled", ptr("recovered")},
			{"completed", nil},
			{"completed", ptr("reattempted")},
			{"failed", ptr("canceled_by_exception")},
			{"skipped", ptr("skipped_by_condition")},
		} {
			name := "NoOutcome"
			if c.outcome != nil {
				name = guardCamel(*c.outcome)
			}
			t.Run(guardCamel(c.state)+"To"+name, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.setNow(t, t0)
				b.defineThreeSteps(t)
				id := b.guardExecutionIn(t, c.state, "1")
				before := b.execution(t, id)

				_, err := b.conn.Exec(b.ctx, "update geneva.step_executions set outcome = $2 where id = $1", id, c.outcome)

				// (no outcome at all breaks step_executions_state_valid,
				// which is checked before the guard, an AFTER trigger)
				code := "55000"
				if c.outcome == nil {
					code = "23514"
				}
				requireCode(t, err, code)
				require.Equal(t, before, b.execution(t, id))
			})
		}
	})

	t.Run("EngineFunctionsPassThrough", func(t *testing.T) {
		t.Parallel()
		// Each history below runs through the engine's functions; the helpers
		// require every call to succeed, so a guard refusing one of the
		// engine's own transitions fails the test.

		t.Run("Conditions", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.define(t, "Guarded", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c", "skip_if": true}]}`)
			b.define(t, "Renamed", `{"steps": [{"name": "a"}, {"name": "b"}]}`)

			conditions := b.create(t, "Guarded", "1")
			_, ok := b.startStep(t, b.active(t, conditions).ID, ptr("skip"))
			require.False(t, ok)
			_, ok = b.startStep(t, b.active(t, conditions).ID, ptr("cancel"))
			require.False(t, ok)

			literalSkip := b.create(t, "Guarded", "2")
			b.complete(t, b.run(t, literalSkip).ExecutionID, "success", nil)
			b.complete(t, b.run(t, literalSkip).ExecutionID, "success", nil)
			_, ok = b.startStep(t, b.active(t, literalSkip).ID, nil) // c: "skip_if": true
			require.False(t, ok)

			heroMissing := b.create(t, "Guarded", "3")
			_, ok = b.startStep(t, b.active(t, heroMissing).ID, ptr("hero_missing"))
			require.False(t, ok)

			precondition := b.create(t, "Guarded", "4")
			b.failPrecondition(t, b.active(t, precondition).ID, []string{"Boom"}, "boom") // pauses

			renamed := b.create(t, "Renamed", "5")
			b.define(t, "Renamed", `{"steps": [{"name": "a2"}, {"name": "b"}]}`)
			_, ok = b.startStep(t, b.active(t, renamed).ID, nil) // step_not_defined pauses
			require.False(t, ok)
			b.call(t, "skip_step", renamed)

			for id, state := range map[int64]string{
				conditions: "canceled", literalSkip: "finished", heroMissing: "canceled",
				precondition: "paused", renamed: "finished",
			} {
				require.Equal(t, state, b.workflow(t, id).State, "workflow %d", id)
			}
		})

		t.Run("Exceptions", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.define(t, "Guarded", `{"steps": [
				{"name": "a", "on_exception": [
					{"action": "reattempt", "matching": ["Retry"]},
					{"action": "reattempt", "matching": ["Limited"], "max_reattempts": 1, "terminal_action": "skip"},
					{"action": "skip", "matching": ["Skip"]},
					{"action": "cancel", "matching": ["Cancel"]},
					{"action": "pause"}]},
				{"name": "b"}]}`)

			failing := b.create(t, "Guarded", "1")
			require.Equal(t, "reattempted_by_exception", deref(b.fail(t, b.run(t, failing).ExecutionID, []string{"Retry"}, "again").Outcome))
			require.Equal(t, "paused_by_exception", deref(b.fail(t, b.run(t, failing).ExecutionID, []string{"Boom"}, "boom").Outcome))
			b.call(t, "resume_workflow", failing)
			require.Equal(t, "skipped_by_exception", deref(b.fail(t, b.run(t, failing).ExecutionID, []string{"Skip"}, "skip").Outcome))
			b.complete(t, b.run(t, failing).ExecutionID, "success", nil)

			exhausted := b.create(t, "Guarded", "2")
			b.fail(t, b.run(t, exhausted).ExecutionID, []string{"Limited"}, "once")
			require.Equal(t, "reattempts_exhausted", deref(b.fail(t, b.run(t, exhausted).ExecutionID, []string{"Limited"}, "twice").Outcome))

			canceled := b.create(t, "Guarded", "3")
			require.Equal(t, "canceled_by_exception", deref(b.fail(t, b.run(t, canceled).ExecutionID, []string{"Cancel"}, "no").Outcome))

			for id, state := range map[int64]string{failing: "finished", exhausted: "ready", canceled: "canceled"} {
				require.Equal(t, state, b.workflow(t, id).State, "workflow %d", id)
			}
		})

		t.Run("HeroTrigger", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.defineThreeSteps(t)
			b.guardExec(t, "create table public.guard_users (id bigint primary key)")
			b.guardExec(t, "insert into public.guard_users (id) values (1), (2), (3)")
			b.guardExec(t, "select geneva.track_hero('public.guard_users', 'User')")
			ready := b.create(t, "ThreeSteps", "1")
			paused := b.guardWorkflowIn(t, "paused", "2")
			performing := b.create(t, "ThreeSteps", "3")
			started := b.run(t, performing)

			b.guardExec(t, "delete from public.guard_users")
			b.complete(t, started.ExecutionID, "success", nil)
			// the performing one cancels when its next step would start
			b.setNow(t, t0.Add(hours(1)))
			_, ok := b.startStep(t, b.active(t, performing).ID, nil)
			require.False(t, ok)

			for _, id := range []int64{ready, paused, performing} {
				require.Equal(t, "canceled", b.workflow(t, id).State, "workflow %d", id)
			}
		})

		t.Run("Housekeeping", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.defineThreeSteps(t)
			reattempted := b.create(t, "ThreeSteps", "1")
			b.run(t, reattempted)
			canceled := b.create(t, "ThreeSteps", "2")
			b.run(t, canceled)

			// stuck in progress: recovered by reattempt, then by cancel
			b.setNow(t, t0.Add(hours(2)))
			var counts map[string]any
			require.NoError(t, b.conn.QueryRow(b.ctx,
				"select geneva.housekeep(p_stuck_in_progress_after => interval '90 minutes')").Scan(&counts))
			require.EqualValues(t, 2, counts["stuck_in_progress_recovered"])
			b.run(t, canceled)
			b.setNow(t, t0.Add(hours(4)))
			require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.housekeep(p_recovery_action => 'cancel', p_stuck_scheduled_after => interval '1000 years')").Scan(&counts))
			require.EqualValues(t, 1, counts["stuck_in_progress_recovered"])
			require.Equal(t, "canceled", b.workflow(t, canceled).State)

			// stuck scheduled: its job was lost
			lost := b.active(t, reattempted)
			b.guardExec(t, "delete from public.river_job where id = $1", *lost.JobID)
			require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.housekeep()").Scan(&counts))
			require.EqualValues(t, 1, counts["stuck_scheduled_recovered"])
			b.complete(t, b.run(t, reattempted).ExecutionID, "finished", nil)

			// retention deletes both
			b.setNow(t, t0.Add(40*24*time.Hour))
			require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.housekeep()").Scan(&counts))
			require.EqualValues(t, 2, counts["workflows_cleaned_up"])
		})

		t.Run("Operators", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.defineThreeSteps(t)

			operated := b.create(t, "ThreeSteps", "1")
			b.call(t, "pause_workflow", operated)
			b.call(t, "resume_workflow", operated)
			b.call(t, "skip_step", operated)     // a skipped, b scheduled in an hour
			b.call(t, "schedule_step", operated) // b now instead
			started := b.run(t, operated)
			b.call(t, "pause_workflow", operated) // at the step boundary
			b.complete(t, started.ExecutionID, "success", nil)
			require.Equal(t, "paused", b.workflow(t, operated).State)
			b.call(t, "skip_step", operated) // c, the last: finished

			canceledWhileRunning := b.create(t, "ThreeSteps", "2")
			started = b.run(t, canceledWhileRunning)
			b.call(t, "pause_workflow", canceledWhileRunning)
			b.call(t, "cancel_workflow", canceledWhileRunning) // replaces the requested pause
			b.complete(t, started.ExecutionID, "success", nil)

			canceledWhilePaused := b.create(t, "ThreeSteps", "3")
			b.fail(t, b.run(t, canceledWhilePaused).ExecutionID, []string{"Boom"}, "boom")
			_, err := b.conn.Exec(b.ctx, "select geneva.schedule_step($1, 'a')", canceledWhilePaused)
			require.NoError(t, err)
			b.call(t, "pause_workflow", canceledWhilePaused)
			b.call(t, "cancel_workflow", canceledWhilePaused)

			for id, state := range map[int64]string{
				operated: "finished", canceledWhileRunning: "canceled", canceledWhilePaused: "canceled",
			} {
				require.Equal(t, state, b.workflow(t, id).State, "workflow %d", id)
			}
		})

		t.Run("Signals", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.define(t, "Guarded", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)

			signals := b.create(t, "Guarded", "1")
			b.complete(t, b.run(t, signals).ExecutionID, "success", nil)
			b.complete(t, b.run(t, signals).ExecutionID, "reattempt", nil)
			b.complete(t, b.run(t, signals).ExecutionID, "skip", nil)
			started := b.run(t, signals)
			_, err := b.conn.Exec(b.ctx, `select geneva.checkpoint_step($1, '{"page": 2}')`, started.ExecutionID)
			require.NoError(t, err)
			b.complete(t, started.ExecutionID, "suspend", nil)
			b.complete(t, b.run(t, signals).ExecutionID, "pause", nil)
			b.call(t, "resume_workflow", signals)
			b.complete(t, b.run(t, signals).ExecutionID, "success", nil)

			finished := b.create(t, "Guarded", "2")
			b.complete(t, b.run(t, finished).ExecutionID, "finished", nil)

			canceled := b.create(t, "Guarded", "3")
			b.complete(t, b.run(t, canceled).ExecutionID, "cancel", nil)

			interrupted := b.create(t, "Guarded", "4")
			rows, err := b.conn.Query(b.ctx, "select * from geneva.interrupt_step($1)", b.run(t, interrupted).ExecutionID)
			require.NoError(t, err)
			rows.Close()
			require.NoError(t, rows.Err())
			b.complete(t, b.run(t, interrupted).ExecutionID, "finished", nil)

			for id, state := range map[int64]string{
				signals: "finished", finished: "finished", canceled: "canceled", interrupted: "finished",
			} {
				require.Equal(t, state, b.workflow(t, id).State, "workflow %d", id)
			}
		})
	})

	t.Run("ExecutionTransitions", func(t *testing.T) {
		t.Parallel()
		// Every pair of states, each on a fresh execution brought to its state
		// by the engine. An update to the same state (with the same outcome) is
		// no transition and passes, but for an ended execution, which no
		// update may touch, even to the values it has (its facts are history,
		// counted when it ended: geneva._end_executions).
		for _, from := range guardExecutionStates {
			for _, to := range guardExecutionStates {
				ended := from != "scheduled" && from != "in_progress"
				legal := from == to && !ended || guardLegalExecution[[2]string{from, to}]
				t.Run(guardCamel(from)+"To"+guardCamel(to), func(t *testing.T) {
					t.Parallel()
					b := setup(t)
					b.setNow(t, t0)
					b.defineThreeSteps(t)
					id := b.guardExecutionIn(t, from, "1")
					before := b.execution(t, id)

					b.setNow(t, t0.Add(time.Minute))
					err := b.guardSetExecutionState(id, to, guardOutcomes[to])

					ends := from != to && to != "in_progress"
					if !legal || ends {
						// an end by hand is refused even when legal: only
						// geneva._end_execution ends executions. (The guards
						// fire after the row is written, so an ended
						// execution made active again beside its workflow's
						// next one breaks the one active execution a
						// workflow first: sql/guards/step_executions_guard_ended.sql.)
						code := "55000"
						if ended && (to == "scheduled" || to == "in_progress") && b.guardOtherActive(t, id) {
							code = "23505"
						}
						requireCode(t, err, code)
						require.Equal(t, before, b.execution(t, id), "nothing changed")
						if !legal {
							return
						}
						// with the engine's permission, a legal end passes
						tx, err := b.conn.Begin(b.ctx)
						require.NoError(t, err)
						_, err = tx.Exec(b.ctx, "select set_config('geneva.ending', 'on', true)")
						require.NoError(t, err)
						_, err = tx.Exec(b.ctx, `update geneva.step_executions
							set state = $2::text, outcome = $3, finished_at = coalesce(finished_at, geneva.now())
							where id = $1`, id, to, guardOutcomes[to])
						require.NoError(t, err)
						require.NoError(t, tx.Commit(b.ctx))
					} else {
						require.NoError(t, err)
					}
					got := b.execution(t, id)
					require.Equal(t, to, got.State)
					require.Equal(t, guardOutcomes[to], got.Outcome)
				})
			}
		}
	})

	t.Run("UpdatesWithoutTransitionPass", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)

		// an ended execution is history: even a change of state-less columns
		// is refused (sql/guards/step_executions_guard_ended.sql)
		for i, state := range []string{"canceled", "completed", "failed", "skipped"} {
			id := b.guardExecutionIn(t, state, "execution-"+state)
			before := b.execution(t, id)

			_, err := b.conn.Exec(b.ctx, `update geneva.step_executions
				set metadata = metadata || '{"note": "looked at"}', cursor = '{"page": 7}',
				  updated_at = $2, state = state, outcome = outcome
				where id = $1`, id, t0.Add(time.Duration(i+1)*time.Hour))
			pgErr := requireCode(t, err, "55000")
			require.Contains(t, pgErr.Message, "has ended", "refused as history, not as a transition")
			require.Equal(t, before, b.execution(t, id), "nothing changed")
		}

		for _, state := range []string{"canceled", "finished"} {
			id := b.guardWorkflowIn(t, state, "workflow-"+state)

			b.guardExec(t, "update geneva.workflows set updated_at = $2, state = state where id = $1", id, t0.Add(hours(5)))

			got := b.workflow(t, id)
			require.Equal(t, state, got.State)
			require.Equal(t, t0.Add(hours(5)), got.UpdatedAt)
		}
	})

	t.Run("WorkflowTransitions", func(t *testing.T) {
		t.Parallel()
		// Every pair of states, each on a fresh workflow brought to its state
		// by the engine. An update to the same state is no transition and
		// passes.
		for _, from := range guardWorkflowStates {
			for _, to := range guardWorkflowStates {
				legal := from == to || guardLegalWorkflow[[2]string{from, to}]
				t.Run(guardCamel(from)+"To"+guardCamel(to), func(t *testing.T) {
					t.Parallel()
					b := setup(t)
					b.setNow(t, t0)
					b.defineThreeSteps(t)
					id := b.guardWorkflowIn(t, from, "1")
					before := b.workflow(t, id)

					err := b.guardSetWorkflowState(id, to)

					if !legal {
						requireCode(t, err, "55000")
						require.Equal(t, before, b.workflow(t, id), "nothing changed")
						return
					}
					require.NoError(t, err)
					require.Equal(t, to, b.workflow(t, id).State)
				})
			}
		}
	})
}

// TestGuardColumns: what no engine function does to the tables is refused
// with 55000 for the owner too (the other roles have no privilege at all),
// and nothing changes.
func TestGuardColumns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.defineThreeSteps(t)
	id := b.create(t, "ThreeSteps", "1")
	ended := b.run(t, id)
	b.complete(t, ended.ExecutionID, "success", nil)
	active := b.active(t, id)
	// a folded count and a delta of each, for the refusals below to find
	b.guardWorkflowIn(t, "finished", "f1")
	_, err := b.conn.Exec(b.ctx, "select geneva.housekeep(p_keep_forever => true)")
	require.NoError(t, err)
	b.guardWorkflowIn(t, "finished", "f2")
	var folded, deltas int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select
		(select count(*) from geneva.ended_executions_by_hour) + (select count(*) from geneva.ended_executions_by_minute),
		(select count(*) from geneva.ended_execution_deltas)`).Scan(&folded, &deltas))
	require.NotZero(t, folded)
	require.NotZero(t, deltas)

	snapshot := func() string {
		var s string
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			select concat_ws('|',
			  (select string_agg(to_jsonb(w)::text, ',' order by id) from geneva.workflows w),
			  (select string_agg(to_jsonb(e)::text, ',' order by id) from geneva.step_executions e),
			  (select string_agg(to_jsonb(d)::text, ',') from geneva.workflow_definitions d),
			  (select string_agg(to_jsonb(c)::text, ',' order by workflow_type, state) from geneva.ended_workflow_counts c),
			  (select string_agg(to_jsonb(c)::text, ',') from geneva.ended_workflow_count_deltas c),
			  (select string_agg(to_jsonb(c)::text, ',') from geneva.ended_execution_deltas c),
			  (select string_agg(to_jsonb(c)::text, ',') from geneva.ended_executions_by_minute c),
			  (select string_agg(to_jsonb(c)::text, ',') from geneva.ended_executions_by_hour c))`).Scan(&s))
		return s
	}
	before := snapshot()

	for _, statement := range []string{
		"update geneva.workflows set hero_id = 'other'",
		"update geneva.workflows set hero_type = 'Account'",
		"update geneva.workflows set workflow_type = 'Other'",
		"update geneva.workflows set id = id + 100",
		"update geneva.workflows set allow_multiple = true",
		"update geneva.workflows set created_at = created_at - interval '1 day'",
		"delete from geneva.workflows",
		// the strand: a scheduled execution ended by hand
		"update geneva.step_executions set state = 'completed', outcome = 'success', finished_at = now() where state = 'scheduled'",
		"update geneva.step_executions set state = 'canceled', outcome = 'canceled_externally', finished_at = now() where state = 'scheduled'",
		"update geneva.step_executions set step_name = 'c' where state = 'scheduled'",
		"update geneva.step_executions set workflow_id = workflow_id + 1",
		"update geneva.step_executions set attempt = attempt + 1",
		"update geneva.step_executions set created_at = created_at - interval '1 day'",
		"update geneva.step_executions set continues_from_id = id",
		"update geneva.step_executions set error_message = 'rewritten' where state = 'completed'",
		"update geneva.step_executions set finished_at = finished_at + interval '1 day' where state = 'completed'",
		"update geneva.step_executions set job_id = null where state = 'completed'",
		// not even to the values it has (it would be counted as ended again)
		"update geneva.step_executions set metadata = metadata where state = 'completed'",
		"delete from geneva.step_executions where state = 'scheduled'",
		"delete from geneva.step_executions",
		`update geneva.workflow_definitions set definition = '{"steps": "oops"}', step_names = '{}', step_waits = '{}'`,
		"delete from geneva.workflow_definitions",
		`insert into geneva.workflows (workflow_type, hero_type, hero_id, state, created_at, updated_at)
		   values ('ThreeSteps', 'User', 'hand', 'ready', now(), now())`,
		`insert into geneva.step_executions (workflow_id, step_name, state, scheduled_for, created_at, updated_at)
		   select id, 'c', 'scheduled', now(), now(), now() from geneva.workflows`,
		// the counts of ended workflows follow the workflows only
		"insert into geneva.ended_workflow_count_deltas values ('ThreeSteps', 'finished', 1000)",
		"delete from geneva.ended_workflow_count_deltas",
		"insert into geneva.ended_workflow_counts values ('ThreeSteps', 'canceled', 1000)",
		"update geneva.ended_workflow_counts set workflows = workflows + 1",
		"delete from geneva.ended_workflow_counts",
		// and those of ended executions follow the executions only
		`insert into geneva.ended_execution_deltas values (now(), 'ThreeSteps', 'a', 'success', 1000, 1000, '{}', '{}')`,
		"update geneva.ended_execution_deltas set executions = executions + 1",
		"delete from geneva.ended_execution_deltas",
		`insert into geneva.ended_executions_by_minute values (now(), 'ThreeSteps', 'a', 'success', 1000)`,
		"update geneva.ended_executions_by_minute set executions = executions + 1",
		"delete from geneva.ended_executions_by_minute",
		`insert into geneva.ended_executions_by_hour values (now(), 'ThreeSteps', 'a', 'success', 1000, 1000, '{}', '{}')`,
		"update geneva.ended_executions_by_hour set executions = executions + 1",
		"update geneva.ended_executions_by_hour set run_time = '{}'",
		"delete from geneva.ended_executions_by_hour",
		`insert into geneva.workflow_definitions select 'Copy', definition, step_names, step_waits, step_await_timeouts, step_afters, step_queues,
		   queue, priority, may_proceed_without_hero, idempotency_ttl, version, created_at, updated_at from geneva.workflow_definitions`,
		`insert into geneva.workflow_definition_versions select 'Copy', version, definition, defined_at, defined_by
		   from geneva.workflow_definition_versions`,
		"update geneva.workflow_definition_versions set definition = '{}'",
		"delete from geneva.workflow_definition_versions",
		"truncate geneva.workflow_definition_versions",
		// TRUNCATE fires no row trigger: it has its own guard on every table
		"truncate geneva.workflows cascade",
		"truncate geneva.step_executions",
		"truncate geneva.workflow_definitions cascade",
		"truncate geneva.housekeeping_rounds",
		"truncate geneva.ended_workflow_counts",
		"truncate geneva.ended_workflow_count_deltas",
		"truncate geneva.ended_execution_deltas",
		"truncate geneva.ended_executions_by_minute",
		"truncate geneva.ended_executions_by_hour",
		"truncate geneva.events",
		"truncate geneva.limits",
		"truncate geneva.limit_slots",
		"truncate geneva.limit_windows",
		// the limits and their counts
		"insert into geneva.limits (name, concurrency, by, created_at, updated_at) values ('x', 1, 'none', now(), now())",
		"insert into geneva.limit_slots values ('[\"limit\", \"x\", \"\"]', 1)",
		"insert into geneva.limit_windows values ('[\"limit\", \"x\", \"\"]', now(), now() + interval '1 minute', 1)",
	} {
		_, err := b.conn.Exec(b.ctx, statement)
		requireCode(t, err, "55000")
	}
	require.Equal(t, before, snapshot(), "a refused statement changed something")

	t.Run("EndedHistoryMayBeInserted", func(t *testing.T) {
		// as an import or the benchmark's fill does
		_, err := b.conn.Exec(b.ctx, `with w as (
			  insert into geneva.workflows (workflow_type, hero_type, hero_id, state, created_at, updated_at, transitioned_at, finished_at)
			  values ('ThreeSteps', 'User', 'imported', 'finished', geneva.now(), geneva.now(), geneva.now(), geneva.now())
			  returning id)
			insert into geneva.step_executions (workflow_id, step_name, state, outcome, scheduled_for, finished_at, created_at, updated_at)
			select id, 'a', 'completed', 'success', geneva.now(), geneva.now(), geneva.now(), geneva.now() from w`)
		require.NoError(t, err)
	})

	t.Run("TheFunctionsStillDoIt", func(t *testing.T) {
		// define_workflow rewrites a definition; its permission ends with it,
		// even in the same transaction
		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, `select geneva.define_workflow('ThreeSteps', '{"steps": [{"name": "a"}, {"name": "b"}]}')`)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "update geneva.workflow_definitions set queue = 'other'")
		requireCode(t, err, "55000")
		require.NoError(t, tx.Rollback(b.ctx))

		// an operator's schedule still ends the active execution and
		// schedules a new one
		_, err = b.conn.Exec(b.ctx, "select geneva.schedule_step($1)", id)
		require.NoError(t, err)
		require.NotEqual(t, active.ID, b.active(t, id).ID)

		// retention deletes an ended workflow with its executions, and only
		// within housekeep
		_, err = b.conn.Exec(b.ctx, "select geneva.cancel_workflow($1)", id)
		require.NoError(t, err)
		b.setNow(t, t0.Add(100*24*time.Hour))
		_, err = b.conn.Exec(b.ctx, "select geneva.housekeep(interval '1 day')")
		require.NoError(t, err)
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.step_executions where workflow_id = $1", id).Scan(&n))
		require.Zero(t, n)
		_, err = b.conn.Exec(b.ctx, "delete from geneva.workflows")
		require.NoError(t, err, "nothing left to delete")
	})
}

// TestWorkflowStateTimestamps: a workflow has paused_at exactly while paused,
// finished_at exactly when finished and canceled_at exactly when canceled
// (workflows_state_valid), as the indexes that tell ongoing workflows from
// ended ones without naming the state rely on: a hand-made update that
// breaks the tie is refused with 23514 and changes nothing, and every state
// the engine brings a workflow to keeps it.
func TestWorkflowStateTimestamps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.defineThreeSteps(t)
	for i, state := range guardWorkflowStates {
		id := b.guardWorkflowIn(t, state, fmt.Sprint("tie", i))
		var tied bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `select (state = 'paused') = (paused_at is not null)
			  and (state = 'finished') = (finished_at is not null)
			  and (state = 'canceled') = (canceled_at is not null)
			from geneva.workflows where id = $1`, id).Scan(&tied))
		require.True(t, tied, "a %s workflow made by the engine", state)
	}
	// legal transitions (the state guard lets them through), each without the
	// timestamp its target requires, and an ongoing workflow given one
	for i, c := range []struct{ from, to, set string }{
		{"ready", "paused", ""},
		{"ready", "finished", ""},
		{"ready", "canceled", ""},
		{"ready", "ready", "finished_at = geneva.now()"},
		{"performing", "performing", "canceled_at = geneva.now()"},
		{"paused", "ready", ""},
	} {
		t.Run(guardCamel(c.from)+"To"+guardCamel(c.to), func(t *testing.T) {
			id := b.guardWorkflowIn(t, c.from, fmt.Sprint("broken", i))
			before := b.workflow(t, id)
			set := "state = $2::text, current_step_name = null, requested_action = null"
			if c.set != "" {
				set += ", " + c.set
			}
			_, err := b.conn.Exec(b.ctx, "update geneva.workflows set "+set+" where id = $1", id, c.to)
			pgErr := requireCode(t, err, "23514")
			require.Equal(t, "workflows_state_valid", pgErr.ConstraintName)
			require.Equal(t, before, b.workflow(t, id), "nothing changed")
		})
	}
}

// TestWorkflowIndexesNameNoState: no index of workflows names the state, as a
// column, in an expression or in its predicate, so that a step's moves
// between ready and performing can be HOT updates (no index entries).
func TestWorkflowIndexesNameNoState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rows, err := b.conn.Query(b.ctx, `select pg_get_indexdef(i.indexrelid)
		from pg_index i where i.indrelid = 'geneva.workflows'::regclass order by 1`)
	require.NoError(t, err)
	definitions, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, definitions)
	for _, definition := range definitions {
		require.NotRegexp(t, `\bstate\b`, definition)
	}
}

// TestGuardTimes: the owner's hand writes that stop the engine without
// breaking a state rule are refused too (issue 44, item 10): the last
// housekeeping round's time pushed into the future (no round would run
// until then), a running execution's updated_at aged (housekeeping would
// recover a live step), a scheduled execution pushed out beyond any time the
// engine sets (it would never run, and never count as stuck). The engine
// still writes them.
func TestGuardTimes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.defineThreeSteps(t)
	running := b.run(t, b.create(t, "ThreeSteps", "1"))
	waiting := b.create(t, "ThreeSteps", "2")
	scheduled := b.active(t, waiting)

	snapshot := func() string {
		var s string
		require.NoError(t, b.conn.QueryRow(b.ctx, `select concat_ws('|',
			(select string_agg(to_jsonb(e)::text, ',' order by id) from geneva.step_executions e),
			(select string_agg(to_jsonb(r)::text, ',') from geneva.housekeeping_rounds r))`).Scan(&s))
		return s
	}
	before := snapshot()
	for _, statement := range []string{
		"update geneva.housekeeping_rounds set last_run_at = now() + interval '10 years'",
		"update geneva.housekeeping_rounds set last_result = '{}'",
		"delete from geneva.housekeeping_rounds",
		"insert into geneva.housekeeping_rounds values (true, now()) on conflict (singleton) do update set last_run_at = 'infinity'",
		"update geneva.step_executions set updated_at = updated_at - interval '2 hours' where state = 'in_progress'",
		"update geneva.step_executions set updated_at = '-infinity' where state = 'in_progress'",
		"update geneva.step_executions set scheduled_for = 'infinity' where state = 'scheduled'",
		"update geneva.step_executions set scheduled_for = scheduled_for + interval '500 years' where state = 'scheduled'",
	} {
		_, err := b.conn.Exec(b.ctx, statement)
		requireCode(t, err, "55000")
	}
	require.Equal(t, before, snapshot(), "a refused statement changed something")

	// what the engine does, and the harmless writes, still pass: a round
	// (on the real clock), a heartbeat (on a test clock that went back), a
	// scheduled execution brought forward
	var result *string
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.housekeep_if_due(interval '0')::text").Scan(&result))
	require.NotNil(t, result)
	b.setNow(t, t0.Add(-time.Hour))
	var beating bool
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.heartbeat_step($1)", running.ExecutionID).Scan(&beating))
	require.True(t, beating)
	_, err := b.conn.Exec(b.ctx, "update geneva.step_executions set scheduled_for = scheduled_for - interval '1 hour' where id = $1", scheduled.ID)
	require.NoError(t, err)
	_, err = b.conn.Exec(b.ctx, "update geneva.step_executions set updated_at = updated_at + interval '1 minute' where id = $1", running.ExecutionID)
	require.NoError(t, err)
}
