package tests

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// createIn creates a workflow of the type in a group.
func (b *testBundle) createIn(t *testing.T, workflowType, heroID, group string) int64 {
	t.Helper()
	var id int64
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflow($1, 'User', $2, p_group => $3)",
		workflowType, heroID, group).Scan(&id))
	return id
}

type limitState struct {
	LimitKeys    []string
	LimitWaitKey *string
	State        string
	ScheduledFor time.Time
	JobID        *int64
}

func (b *testBundle) limitState(t *testing.T, executionID int64) limitState {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, `select limit_keys, limit_wait_key, state, scheduled_for, job_id
		from geneva.step_executions where id = $1`, executionID)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[limitState])
	require.NoError(t, err)
	return row
}

type usageRow struct {
	Kind           string
	LimitName      string
	Key            string
	InProgress     int64
	Waiting        int64
	StartsInWindow int64
	Concurrency    *int32
	Rate           *int32
}

func (b *testBundle) limitUsage(t *testing.T) []usageRow {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, `select kind, limit_name, key, in_progress, waiting, starts_in_window,
		concurrency, rate from geneva.limit_usage order by kind, limit_name, key`)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[usageRow])
	require.NoError(t, err)
	return all
}

func TestDefineLimit(t *testing.T) {
	t.Parallel()

	t.Run("ConcurrencyPerGroupWaitsWithoutAJobAndTheNextIsWokenWhenOneEnds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 2}, "steps": [{"name": "a"}, {"name": "b"}]}`)
		var ids, firsts []int64
		for i := range 4 {
			id := b.createIn(t, "Sync", fmt.Sprint(i), "acme")
			ids = append(ids, id)
			firsts = append(firsts, b.active(t, id).ID)
		}
		other := b.createIn(t, "Sync", "x", "globex")

		var started []startedStep
		for _, e := range firsts {
			s, ok := b.startStep(t, e, nil)
			if ok {
				started = append(started, s)
			}
		}
		require.Len(t, started, 2, "two of acme's at once")
		waiter := b.limitState(t, firsts[2])
		require.Equal(t, "scheduled", waiter.State)
		require.Equal(t, `["concurrency", "Sync", "acme"]`, deref(waiter.LimitWaitKey))
		require.Equal(t, 1, b.jobCount(t, firsts[2]), "no new job: it waits to be woken")
		var attempt int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select attempt from geneva.step_executions where id = $1", firsts[2]).Scan(&attempt))
		require.Equal(t, 1, attempt, "not an attempt")
		_, ok := b.startStep(t, b.active(t, other).ID, nil)
		require.True(t, ok, "another group is not held back")
		require.Equal(t, []usageRow{
			{"concurrency", "Sync", "acme", 2, 2, 0, ptr(int32(2)), nil},
			{"concurrency", "Sync", "globex", 1, 0, 0, ptr(int32(2)), nil},
		}, b.limitUsage(t))
		b.setNow(t, t0.Add(time.Hour))
		stuck := 0
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.stuck_executions where state = 'scheduled'").Scan(&stuck))
		require.Zero(t, stuck, "a waiter is not stuck")

		// one ends: the oldest waiter holds the freed slot, due now with a job
		b.setNow(t, t0.Add(time.Minute))
		b.complete(t, started[0].ExecutionID, "success", nil)
		woken := b.limitState(t, firsts[2])
		require.Nil(t, woken.LimitWaitKey)
		require.Equal(t, []string{`["concurrency", "Sync", "acme"]`}, woken.LimitKeys)
		require.Equal(t, "available", b.job(t, deref(woken.JobID)).State, "its job runs now")
		require.NotNil(t, b.limitState(t, firsts[3]).LimitWaitKey, "the younger still waits")

		// the next step of the one that ended may not take the slot passed on
		next := b.active(t, ids[0])
		_, ok = b.startStep(t, next.ID, nil)
		require.False(t, ok)
		require.NotNil(t, b.limitState(t, next.ID).LimitWaitKey)
		s, ok := b.startStep(t, firsts[2], nil)
		require.True(t, ok, "the woken one starts in its slot")
		require.Equal(t, firsts[2], s.ExecutionID)

		// an error that pauses frees the slot too
		b.fail(t, started[1].ExecutionID, []string{"Boom"}, "boom")
		require.Nil(t, b.limitState(t, firsts[3]).LimitWaitKey, "woken by the failure's end")
	})

	t.Run("RecoveryOfADeadWorkersStepFreesItsSlot", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`)
		first := b.create(t, "Sync", "1")
		second := b.create(t, "Sync", "2")
		b.run(t, first)
		_, ok := b.startStep(t, b.active(t, second).ID, nil)
		require.False(t, ok)

		b.setNow(t, t0.Add(2*time.Hour))
		_, err := b.conn.Exec(b.ctx, "select geneva.housekeep(p_retention => null)")
		require.NoError(t, err)
		require.Nil(t, b.limitState(t, b.active(t, second).ID).LimitWaitKey, "the recovered step freed its slot")
		rerun := b.active(t, first).ID
		_, ok = b.startStep(t, rerun, nil)
		require.False(t, ok)
		require.NotNil(t, b.limitState(t, rerun).LimitWaitKey, "and its rerun waits for one")
	})

	// A step that ends passes its slot to its next step, started in the same
	// call, only while the slot is within the key's bound: after the
	// concurrency is lowered, a slot numbered above it is freed (its row
	// deleted) when its step ends (the key's slots are not counted: a slot's
	// number is never above the bound it was taken under), and one numbered
	// within it is carried.
	t.Run("ALoweredConcurrencyFreesTheSlotsNumberedAboveIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		const three = `{"concurrency": {"by": "type", "limit": 3}, "steps": [{"name": "a"}, {"name": "b"}]}`
		const two = `{"concurrency": {"by": "type", "limit": 2}, "steps": [{"name": "a"}, {"name": "b"}]}`
		b.define(t, "Carry", three)
		var workflows []int64
		for i := range 3 {
			id := b.create(t, "Carry", fmt.Sprint(i))
			_, ok := b.startStep(t, b.active(t, id).ID, nil)
			require.True(t, ok)
			workflows = append(workflows, id)
		}
		// each held slot's workflow and number, and how many rows the key has
		slots := func() (map[int64]int32, int) {
			rows, err := b.conn.Query(b.ctx, "select workflow_id, slot from geneva.limit_slots where workflow_id is not null")
			require.NoError(t, err)
			held := map[int64]int32{}
			var workflowID int64
			var slot int32
			_, err = pgx.ForEachRow(rows, []any{&workflowID, &slot}, func() error {
				held[workflowID] = slot
				return nil
			})
			require.NoError(t, err)
			var all int
			require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.limit_slots").Scan(&all))
			return held, all
		}
		held, all := slots()
		require.Equal(t, map[int64]int32{workflows[0]: 1, workflows[1]: 2, workflows[2]: 3}, held)
		require.Equal(t, 3, all)

		// unchanged, the next step keeps its step's slot
		next := b.continueStep(t, b.active(t, workflows[0]).ID, "success", nil)
		require.NotNil(t, next.NextExecutionID, "started in the same call")
		require.Equal(t, []string{`["concurrency", "Carry", "Carry"]`}, b.limitState(t, *next.NextExecutionID).LimitKeys)
		held, _ = slots()
		require.Equal(t, map[int64]int32{workflows[0]: 1, workflows[1]: 2, workflows[2]: 3}, held)

		// lowered to 2, three held: slot 3 is freed when its step ends, its
		// row gone, and the next step goes through its own job; slot 2 is
		// carried
		b.define(t, "Carry", two)
		next = b.continueStep(t, b.active(t, workflows[2]).ID, "success", nil)
		require.Nil(t, next.NextExecutionID, "not carried: its number is above the bound")
		held, all = slots()
		require.Equal(t, map[int64]int32{workflows[0]: 1, workflows[1]: 2}, held)
		require.Equal(t, 2, all, "the row above the bound deleted")
		waiting := b.active(t, workflows[2])
		require.Equal(t, "scheduled", waiting.State)
		require.Equal(t, 1, b.jobCount(t, waiting.ID))
		next = b.continueStep(t, b.active(t, workflows[1]).ID, "success", nil)
		require.NotNil(t, next.NextExecutionID, "carried: within the bound in force")

		// two end: their rows stay, free; a new workflow's claim takes the
		// lowest, and its next step carries it
		b.complete(t, b.active(t, workflows[0]).ID, "success", nil)
		b.complete(t, b.active(t, workflows[1]).ID, "success", nil)
		held, all = slots()
		require.Empty(t, held)
		require.Equal(t, 2, all)
		fresh := b.create(t, "Carry", "3")
		_, ok := b.startStep(t, b.active(t, fresh).ID, nil)
		require.True(t, ok)
		held, _ = slots()
		require.Equal(t, map[int64]int32{fresh: 1}, held)
		next = b.continueStep(t, b.active(t, fresh).ID, "success", nil)
		require.NotNil(t, next.NextExecutionID, "carried")
		held, _ = slots()
		require.Equal(t, map[int64]int32{fresh: 1}, held)
	})

	// A slot is carried under the key it was taken with only: a definition
	// whose concurrency now counts by another key, or that adds a rate,
	// frees it when the step ends.
	t.Run("ANewKeyOrANewLimitEndsTheCarry", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		const byGroup = `{"concurrency": {"by": "group", "limit": 5}, "steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`
		const byHero = `{"concurrency": {"by": "hero", "limit": 5}, "steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`
		const withRate = `{"concurrency": {"by": "hero", "limit": 5}, "rate_limit": {"by": "hero", "limit": 100, "per": "1 minute"},
			"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`
		b.define(t, "Rekey", byGroup)
		id := b.createIn(t, "Rekey", "1", "acme")
		_, ok := b.startStep(t, b.active(t, id).ID, nil)
		require.True(t, ok)
		b.define(t, "Rekey", byHero)
		next := b.continueStep(t, b.active(t, id).ID, "success", nil)
		require.Nil(t, next.NextExecutionID, "the key is the hero's now")
		s, ok := b.startStep(t, b.active(t, id).ID, nil)
		require.True(t, ok)
		require.Equal(t, []string{`["concurrency", "Rekey", "User:1"]`}, b.limitState(t, s.ExecutionID).LimitKeys)
		b.define(t, "Rekey", withRate)
		next = b.continueStep(t, s.ExecutionID, "success", nil)
		require.Nil(t, next.NextExecutionID, "a rate to check: claimed by its own job")
	})

	// Lowered while others wait: a freed slot taken above the new bound is
	// passed to a waiter only while the key has room under it.
	t.Run("ALoweredConcurrencyHoldsWhileOthersWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		const two = `{"concurrency": {"by": "type", "limit": 2}, "steps": [{"name": "a"}, {"name": "b"}]}`
		const one = `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}, {"name": "b"}]}`
		b.define(t, "Low", two)
		var workflows []int64
		for i := range 6 {
			workflows = append(workflows, b.create(t, "Low", fmt.Sprint(i)))
		}
		for _, w := range workflows {
			b.startStep(t, b.active(t, w).ID, nil)
		}
		ids := func(query string) []int64 {
			rows, err := b.conn.Query(b.ctx, query)
			require.NoError(t, err)
			all, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			require.NoError(t, err)
			return all
		}
		const inProgress = "select id from geneva.step_executions where state = 'in_progress' order by id"
		require.Len(t, ids(inProgress), 2)
		b.define(t, "Low", one)
		// end whatever runs, claim whatever was woken, until all finish
		for round := 0; len(ids(inProgress)) > 0; round++ {
			require.Less(t, round, 20)
			for _, id := range ids(inProgress) {
				b.complete(t, id, "success", nil)
			}
			for _, id := range ids("select id from geneva.step_executions where state = 'scheduled' and limit_wait_key is null order by id") {
				b.startStep(t, id, nil)
			}
			require.LessOrEqual(t, len(ids(inProgress)), 1, "round %d: lowered to 1", round)
		}
		require.Empty(t, ids("select id from geneva.step_executions where state = 'scheduled'"), "no one left waiting")
		require.Empty(t, ids("select workflow_id from geneva.limit_slots where workflow_id is not null"), "no slot left held")
	})

	// A waiter passed a slot whose key changed before its claim frees the
	// passed slot when it starts under the new key.
	t.Run("AWokenWaiterRekeyedFreesThePassedSlot", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		const byGroup = `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "a"}]}`
		const byHero = `{"concurrency": {"by": "hero", "limit": 1}, "steps": [{"name": "a"}]}`
		b.define(t, "Rk", byGroup)
		w0 := b.createIn(t, "Rk", "0", "g")
		w1 := b.createIn(t, "Rk", "1", "g")
		s0, ok := b.startStep(t, b.active(t, w0).ID, nil)
		require.True(t, ok)
		e1 := b.active(t, w1).ID
		_, ok = b.startStep(t, e1, nil)
		require.False(t, ok)
		b.define(t, "Rk", byHero)
		b.complete(t, s0.ExecutionID, "success", nil) // the group's slot passed to w1
		s1, ok := b.startStep(t, e1, nil)
		require.True(t, ok)
		require.Equal(t, []string{`["concurrency", "Rk", "User:1"]`}, b.limitState(t, s1.ExecutionID).LimitKeys)
		b.complete(t, s1.ExecutionID, "success", nil)
		var held int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.limit_slots where workflow_id is not null").Scan(&held))
		require.Zero(t, held, "every workflow finished")
	})

	t.Run("RateLimitReservesTheNextWindowWithRoom", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Call", `{"rate_limit": {"by": "type", "limit": 2, "per": "1 minute"}, "steps": [{"name": "a"}]}`)
		var executions []int64
		for i := range 5 {
			executions = append(executions, b.active(t, b.create(t, "Call", fmt.Sprint(i))).ID)
		}
		var started int
		for _, e := range executions {
			if _, ok := b.startStep(t, e, nil); ok {
				started++
			}
		}
		require.Equal(t, 2, started)
		require.Equal(t, t0.Add(time.Minute), b.limitState(t, executions[2]).ScheduledFor)
		require.Equal(t, t0.Add(time.Minute), b.limitState(t, executions[3]).ScheduledFor)
		require.Equal(t, t0.Add(2*time.Minute), b.limitState(t, executions[4]).ScheduledFor)
		require.Equal(t, []usageRow{{"rate_limit", "Call", "Call", 0, 3, 2, nil, ptr(int32(2))}}, b.limitUsage(t), "three held by the rate wait")

		b.setNow(t, t0.Add(time.Minute))
		_, ok := b.startStep(t, executions[4], nil)
		require.False(t, ok, "early")
		for _, e := range executions[2:4] {
			_, ok := b.startStep(t, e, nil)
			require.True(t, ok, "its reserved window")
		}
		b.setNow(t, t0.Add(2*time.Minute))
		_, ok = b.startStep(t, executions[4], nil)
		require.True(t, ok)
	})

	t.Run("NamedLimitAcrossTypes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		_, err := b.conn.Exec(b.ctx, "select geneva.define_limit('stripe_api', p_concurrency => 1)")
		require.NoError(t, err)
		b.define(t, "Charge", `{"steps": [{"name": "free"}, {"name": "charge", "limits": ["stripe_api"]}]}`)
		b.define(t, "Refund", `{"steps": [{"name": "refund", "limits": ["stripe_api"]}]}`)
		charge := b.create(t, "Charge", "1")
		b.complete(t, b.run(t, charge).ExecutionID, "success", nil) // an unlimited step runs freely
		refund := b.create(t, "Refund", "1")
		b.run(t, charge)
		_, ok := b.startStep(t, b.active(t, refund).ID, nil)
		require.False(t, ok, "the charge holds stripe_api")

		// the limit grows: its waiter is woken at once
		_, err = b.conn.Exec(b.ctx, "select geneva.define_limit('stripe_api', p_concurrency => 2)")
		require.NoError(t, err)
		_, ok = b.startStep(t, b.active(t, refund).ID, nil)
		require.True(t, ok)
	})

	t.Run("PauseGivesAPassedSlotToTheNextWaiter", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`)
		ids := []int64{b.create(t, "Sync", "1"), b.create(t, "Sync", "2"), b.create(t, "Sync", "3")}
		running := b.run(t, ids[0])
		for _, id := range ids[1:] {
			_, ok := b.startStep(t, b.active(t, id).ID, nil)
			require.False(t, ok)
		}
		b.complete(t, running.ExecutionID, "success", nil)
		require.NotNil(t, b.limitState(t, b.active(t, ids[1]).ID).LimitKeys, "passed to the oldest")
		b.call(t, "pause_workflow", ids[1])
		require.Nil(t, b.limitState(t, b.active(t, ids[1]).ID).LimitKeys)
		require.NotNil(t, b.limitState(t, b.active(t, ids[2]).ID).LimitKeys, "and on to the next")
	})

	t.Run("AWorkerThatFreesASlotRunsItsWaiterNext", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "a"}, {"name": "b"}]}`)
		first := b.createIn(t, "Sync", "1", "acme")
		second := b.createIn(t, "Sync", "2", "acme")
		running := b.run(t, first)
		waiter := b.active(t, second)
		_, ok := b.startStep(t, waiter.ID, nil)
		require.False(t, ok, "acme is full")

		// first's a ends, offering to continue and to take a waiter: the
		// slot goes to second's a, started for this worker, without a job
		took := b.takeWaiters(t, running.ExecutionID)
		require.Equal(t, waiter.ID, deref(took.NextExecutionID))
		require.Equal(t, "a", deref(took.NextStepName))
		require.Equal(t, second, deref(took.NextWorkflowID))
		require.Equal(t, "Sync", deref(took.NextWorkflowType))
		require.Equal(t, "2", deref(took.NextHeroID))
		require.Equal(t, "acme", deref(took.NextGroupName))
		require.Equal(t, "ready", took.WorkflowState, "first's b waits for the key")
		taken := b.limitState(t, waiter.ID)
		require.Equal(t, "in_progress", taken.State)
		require.Equal(t, []string{`["concurrency", "Sync", "acme"]`}, taken.LimitKeys)
		require.Nil(t, taken.LimitWaitKey)
		require.Equal(t, 1, b.jobCount(t, waiter.ID), "no job: the worker runs it")
		require.Equal(t, "performing", b.workflow(t, second).State)
		next := b.active(t, first)
		require.Equal(t, "b", next.StepName)
		require.NotNil(t, b.limitState(t, next.ID).LimitWaitKey, "first's b waits behind")
		require.Equal(t, 0, b.jobCount(t, next.ID))

		// second's a ends the same way: the slot goes back to first's b
		took = b.takeWaiters(t, waiter.ID)
		require.Equal(t, next.ID, deref(took.NextExecutionID))
		require.Equal(t, first, deref(took.NextWorkflowID))
		require.Equal(t, "1", deref(took.NextHeroID))

		// a single complete_and_continue (the public protocol) takes none:
		// the waiter, second's b, is woken with a job
		var nextID *int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select next_execution_id from geneva.complete_and_continue($1)",
			next.ID).Scan(&nextID))
		require.Nil(t, nextID)
		woken := b.limitState(t, b.active(t, second).ID)
		require.Equal(t, "scheduled", woken.State)
		require.Equal(t, "available", b.job(t, deref(woken.JobID)).State)
	})

	t.Run("ARepeatOrAStepOfAnotherQueueIsNotTaken", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 1},
			"steps": [{"name": "a"}, {"name": "b", "http": {"url": "http://127.0.0.1:9/b"}}]}`)
		b.define(t, "Again", `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`)
		for _, c := range []struct {
			name, workflowType string
			// ends the waiter's first execution so that the one that waits
			// is a repeat (reattempt) or a step of another queue (b, HTTP)
			signal string
		}{{"Repeat", "Again", "reattempt"}, {"AnotherQueue", "Sync", "success"}} {
			first, second := b.create(t, c.workflowType, c.name+"1"), b.create(t, c.workflowType, c.name+"2")
			b.complete(t, b.run(t, second).ExecutionID, c.signal, nil)
			running := b.run(t, first)
			waiter := b.active(t, second)
			_, ok := b.startStep(t, waiter.ID, nil)
			require.False(t, ok, "%s: full", c.name)
			require.NotNil(t, b.limitState(t, waiter.ID).LimitWaitKey, "%s: it waits", c.name)

			took := b.takeWaiters(t, running.ExecutionID)
			require.Nil(t, took.NextExecutionID, "%s: the worker does not take it", c.name)
			woken := b.limitState(t, waiter.ID)
			require.Equal(t, "scheduled", woken.State, c.name)
			require.NotNil(t, woken.LimitKeys, "%s: it holds the slot", c.name)
			require.Equal(t, "available", b.job(t, deref(woken.JobID)).State, "%s: woken with a job", c.name)
		}
	})

	t.Run("AWaiterWhoseWorkflowIsLockedIsWokenWithAJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`)
		first, second, third := b.create(t, "Sync", "1"), b.create(t, "Sync", "2"), b.create(t, "Sync", "3")
		running := b.run(t, first)
		waiters := []int64{b.active(t, second).ID, b.active(t, third).ID}
		for _, id := range waiters {
			_, ok := b.startStep(t, id, nil)
			require.False(t, ok)
		}
		// another transaction holds second's workflow (an operator's verb
		// in progress): the ending worker does not wait for it
		tx, err := b.pool.Begin(b.ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(b.ctx) }()
		_, err = tx.Exec(b.ctx, "select from geneva.workflows where id = $1 for no key update", second)
		require.NoError(t, err)

		took := b.takeWaiters(t, running.ExecutionID)
		require.Nil(t, took.NextExecutionID, "the oldest waiter's workflow is locked: not taken")
		woken := b.limitState(t, waiters[0])
		require.Equal(t, "scheduled", woken.State)
		require.Equal(t, []string{`["concurrency", "Sync", "Sync"]`}, woken.LimitKeys, "it holds the slot all the same")
		require.Equal(t, "available", b.job(t, deref(woken.JobID)).State, "woken with a job")
		require.NotNil(t, b.limitState(t, waiters[1]).LimitWaitKey, "the younger still waits")
	})

	// A workflow created while its key has waiters waits behind them at
	// once, without a job (no fetch and claim to find the key full, nothing
	// in River's queue ahead of other keys' work), and is woken in its turn.
	t.Run("AWorkflowCreatedBehindWaitersWaitsWithoutAJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "a"}]}`)
		b.define(t, "Later", `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "a", "wait": "1 minute"}]}`)
		holder := b.active(t, b.createIn(t, "Sync", "1", "acme")).ID
		waiter := b.active(t, b.createIn(t, "Sync", "2", "acme")).ID
		fresh := b.active(t, b.createIn(t, "Sync", "3", "acme")).ID
		require.Equal(t, 1, b.jobCount(t, fresh), "no one waits yet: its job, and its claim decides")
		_, ok := b.startStep(t, holder, nil)
		require.True(t, ok)
		for _, id := range []int64{waiter, fresh} {
			_, ok = b.startStep(t, id, nil)
			require.False(t, ok)
		}

		late := b.active(t, b.createIn(t, "Sync", "4", "acme")).ID
		s := b.limitState(t, late)
		require.Equal(t, "scheduled", s.State)
		require.Equal(t, `["concurrency", "Sync", "acme"]`, deref(s.LimitWaitKey), "it waits behind the others")
		require.Nil(t, s.JobID)
		require.Zero(t, b.jobCount(t, late), "without a job")
		other := b.active(t, b.createIn(t, "Sync", "5", "globex")).ID
		require.Nil(t, b.limitState(t, other).LimitWaitKey, "another key, no one waiting: its job")
		require.Equal(t, 1, b.jobCount(t, other))
		delayed := b.active(t, b.createIn(t, "Later", "6", "acme")).ID
		require.Nil(t, b.limitState(t, delayed).LimitWaitKey, "not due now: its job, at its time")
		require.Equal(t, 1, b.jobCount(t, delayed))
		require.Equal(t, []usageRow{
			{"concurrency", "Sync", "acme", 1, 3, 0, ptr(int32(1)), nil},
		}, b.limitUsage(t), "three waiting, one of them without a job")

		// woken oldest first: the holder's end wakes waiter, waiter's end
		// wakes fresh, fresh's end wakes the late one
		b.complete(t, holder, "success", nil)
		for i, id := range []int64{waiter, fresh} {
			require.Nil(t, b.limitState(t, id).LimitWaitKey, "woken %d", i)
			require.NotNil(t, b.limitState(t, late).LimitWaitKey, "the late one waits its turn")
			_, ok = b.startStep(t, id, nil)
			require.True(t, ok)
			b.complete(t, id, "success", nil)
		}
		woken := b.limitState(t, late)
		require.Nil(t, woken.LimitWaitKey)
		require.Equal(t, []string{`["concurrency", "Sync", "acme"]`}, woken.LimitKeys)
		require.Equal(t, "available", b.job(t, deref(woken.JobID)).State, "woken with a job")
		_, ok = b.startStep(t, late, nil)
		require.True(t, ok)
	})

	// A creation that waits takes no lock a worker's end waits for (an
	// application's transaction may be long): the key's slot frees and the
	// waiter ahead runs and ends while it is open. The wake-up it so misses
	// (no free saw it) is recovered by housekeeping's backstop.
	t.Run("ACreationBlocksNoEndAndAMissedWakeUpIsRecovered", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		holder, waiter := b.oneHolderOneWaiter(t)
		_, err := b.conn.Exec(b.ctx, "set lock_timeout = '5s'")
		require.NoError(t, err)

		tx := b.txAtT0(t)
		var late int64
		require.NoError(t, tx.QueryRow(b.ctx, "select geneva.create_workflow('Sync', 'User', '3')").Scan(&late))

		b.complete(t, holder, "success", nil)
		_, ok := b.startStep(t, waiter, nil)
		require.True(t, ok, "woken by the holder's end")
		b.complete(t, waiter, "success", nil)
		require.NoError(t, tx.Commit(b.ctx))

		lateExecution := b.active(t, late).ID
		require.NotNil(t, b.limitState(t, lateExecution).LimitWaitKey, "no free saw it")
		require.Zero(t, b.jobCount(t, lateExecution))
		_, err = b.conn.Exec(b.ctx, "select geneva.housekeep(p_retention => null)")
		require.NoError(t, err)
		woken := b.limitState(t, lateExecution)
		require.Nil(t, woken.LimitWaitKey, "woken by housekeeping's backstop")
		require.Equal(t, []string{`["concurrency", "Sync", "Sync"]`}, woken.LimitKeys)
		require.Equal(t, "available", b.job(t, deref(woken.JobID)).State)
	})

	// Waiters alone do not hold a creation back: with a slot free (the one
	// waiter's workflow is paused, so the end passed it over) it gets its job.
	t.Run("ACreationWhenTheKeyHasRoomGetsItsJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		holder, waiter := b.oneHolderOneWaiter(t)
		var paused int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select workflow_id from geneva.step_executions where id = $1", waiter).Scan(&paused))
		_, err := b.conn.Exec(b.ctx, "select geneva.pause_workflow($1)", paused)
		require.NoError(t, err)
		b.complete(t, holder, "success", nil)
		require.NotNil(t, b.limitState(t, waiter).LimitWaitKey, "paused: passed over, still waiting")

		late := b.active(t, b.create(t, "Sync", "3")).ID
		require.Nil(t, b.limitState(t, late).LimitWaitKey, "the key has room")
		require.Equal(t, 1, b.jobCount(t, late))
	})

	// Nor does a creation wait for an end in flight: it counts the key's
	// slots as it sees them, and waits behind the waiter that end wakes.
	t.Run("ACreationDoesNotWaitForAnEndInFlight", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		holder, waiter := b.oneHolderOneWaiter(t)
		_, err := b.conn.Exec(b.ctx, "set lock_timeout = '5s'")
		require.NoError(t, err)

		tx := b.txAtT0(t)
		_, err = tx.Exec(b.ctx, "select geneva.complete_step($1, 'success')", holder)
		require.NoError(t, err)

		late := b.active(t, b.create(t, "Sync", "3")).ID
		require.NotNil(t, b.limitState(t, late).LimitWaitKey, "behind the waiter")
		require.Zero(t, b.jobCount(t, late))
		require.NoError(t, tx.Commit(b.ctx))
		require.Nil(t, b.limitState(t, waiter).LimitWaitKey, "the end woke the older waiter")
		_, ok := b.startStep(t, waiter, nil)
		require.True(t, ok)
		b.complete(t, waiter, "success", nil)
		require.Nil(t, b.limitState(t, late).LimitWaitKey, "and its end the late one")
		require.Equal(t, 1, b.jobCount(t, late))
	})

	t.Run("AWaiterWithAConditionIsNotTaken", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		for typ, definition := range map[string]string{
			"CancelIf": `{"concurrency": {"by": "type", "limit": 1}, "cancel_if": ["closed"], "steps": [{"name": "a"}]}`,
			"SkipIf":   `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a", "skip_if": "condition"}]}`,
			"Rate": `{"concurrency": {"by": "type", "limit": 1}, "rate_limit": {"by": "type", "limit": 100, "per": "1 minute"},
				"steps": [{"name": "a"}]}`,
		} {
			b.define(t, typ, definition)
			first, second := b.create(t, typ, "1"), b.create(t, typ, "2")
			running := b.run(t, first)
			waiter := b.active(t, second)
			_, ok := b.startStep(t, waiter.ID, nil)
			require.False(t, ok, "%s: full", typ)
			took := b.takeWaiters(t, running.ExecutionID)
			require.Nil(t, took.NextExecutionID, "%s: the worker does not take it", typ)
			woken := b.limitState(t, waiter.ID)
			require.Equal(t, "scheduled", woken.State, typ)
			require.Equal(t, "available", b.job(t, deref(woken.JobID)).State, "%s: woken with a job", typ)
		}
	})

	// A key's rows (its lock, its slots, kept free for the next claims) go
	// when housekeeping finds it unused: no slot held, no one waiting, no
	// rate window; a key in use keeps them, and a claim after makes them
	// again.
	t.Run("HousekeepingDeletesTheRowsOfUnusedKeys", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 2}, "steps": [{"name": "a"}]}`)
		rows := func() (keys, slots int) {
			require.NoError(t, b.conn.QueryRow(b.ctx,
				"select (select count(*) from geneva.limit_keys), (select count(*) from geneva.limit_slots)").Scan(&keys, &slots))
			return keys, slots
		}
		done := b.createIn(t, "Sync", "1", "acme")
		b.complete(t, b.run(t, done).ExecutionID, "success", nil)
		busy := b.createIn(t, "Sync", "2", "globex")
		running := b.run(t, busy)
		keys, slots := rows()
		require.Equal(t, 2, keys)
		require.Equal(t, 4, slots, "each key's two, one of them free")

		_, err := b.conn.Exec(b.ctx, "select geneva.housekeep(p_retention => null)")
		require.NoError(t, err)
		keys, slots = rows()
		require.Equal(t, 1, keys, "acme's went, globex's holds a slot")
		require.Equal(t, 2, slots)

		again := b.createIn(t, "Sync", "3", "acme")
		b.run(t, again)
		b.complete(t, running.ExecutionID, "success", nil)
		keys, slots = rows()
		require.Equal(t, 2, keys, "made again by the claim")
		require.Equal(t, 4, slots)
	})

	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for statement, code := range map[string]string{
			"select geneva.define_limit(null, 1)":                                                               "22004",
			"select geneva.define_limit('x', 1, p_by => null)":                                                  "22004",
			"select geneva.define_limit('', 1)":                                                                 "22023",
			"select geneva.define_limit(repeat('x', 256), 1)":                                                   "22001",
			"select geneva.define_limit('x')":                                                                   "22023",
			"select geneva.define_limit('x', 0)":                                                                "22023",
			"select geneva.define_limit('x', p_rate => 5)":                                                      "22023",
			"select geneva.define_limit('x', p_rate => 5, p_per => '1 month')":                                  "22023",
			"select geneva.define_limit('x', 1, p_by => 'tenant')":                                              "22023",
			`select geneva.define_workflow('X', '{"concurrency": {"by": "tenant", "limit": 2}, "steps": []}')`:  "22023",
			`select geneva.define_workflow('X', '{"concurrency": {"by": "group", "limit": 0}, "steps": []}')`:   "22023",
			`select geneva.define_workflow('X', '{"concurrency": {"by": "group", "limit": 1.5}, "steps": []}')`: "22023",
			`select geneva.define_workflow('X', '{"rate_limit": {"by": "group", "limit": 5}, "steps": []}')`:    "22023",
			`select geneva.define_workflow('X', '{"steps": [{"name": "a", "limits": ["nope"]}]}')`:              "22023",
			`select geneva.define_workflow('X', '{"steps": [{"name": "a", "limits": "nope"}]}')`:                "22023",
		} {
			_, err := b.conn.Exec(b.ctx, statement)
			requireCode(t, err, code)
		}
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select (select count(*) from geneva.limits) + (select count(*) from geneva.workflow_definitions)").Scan(&n))
		require.Zero(t, n)
	})
}

// TestLimitsUnderConcurrentClaims: claimers and completers on real
// connections never run more than a group's limit at once, and every waiter
// is woken (none is left behind: the run ends).
func TestLimitsUnderConcurrentClaims(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 2}, "steps": [{"name": "a"}, {"name": "b"}]}`)
	const workflows, groups = 100, 5
	for i := range workflows {
		b.createIn(t, "Sync", fmt.Sprint(i), fmt.Sprintf("g%d", i%groups))
	}

	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	var (
		wg      sync.WaitGroup
		maxSeen atomic.Int64
	)
	done := make(chan struct{})
	go func() { // the sampler
		conn := dbtest.NewConn(t, b.conf)
		for {
			select {
			case <-done:
				return
			default:
			}
			var most int64
			if err := conn.QueryRow(ctx, `select coalesce(max(n), 0) from (
				select count(*) as n from geneva.step_executions e join geneva.workflows w on w.id = e.workflow_id
				where e.state = 'in_progress' group by w.group_name) x`).Scan(&most); err != nil {
				return
			}
			if most > maxSeen.Load() {
				maxSeen.Store(most)
			}
		}
	}()
	for range 4 {
		wg.Add(1)
		conn := dbtest.NewConn(t, b.conf)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				rows, err := conn.Query(ctx, `select id from geneva.step_executions
					where state = 'scheduled' and limit_wait_key is null order by random() limit 3`)
				if err != nil {
					return
				}
				ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
				if err != nil {
					return
				}
				if len(ids) == 0 {
					var ongoing int
					if conn.QueryRow(ctx, "select count(*) from geneva.workflows where state <> 'finished'").Scan(&ongoing) != nil || ongoing == 0 {
						return
					}
					time.Sleep(5 * time.Millisecond)
					continue
				}
				for _, id := range ids {
					started, ok, err := startStepOn(ctx, conn, id, nil)
					if err != nil || !ok {
						continue
					}
					_, _ = conn.Exec(ctx, "select * from geneva.complete_step($1)", started.ExecutionID)
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	require.NoError(t, ctx.Err(), "a waiter was left behind")
	var finished int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows where state = 'finished'").Scan(&finished))
	require.Equal(t, workflows, finished)
	require.LessOrEqual(t, maxSeen.Load(), int64(2), "a group ran more than its limit at once")
	require.Equal(t, int64(2), maxSeen.Load(), "the limit was reached (the test is not trivial)")
}

// TestReadmeLimits runs docs/limits.md's example and checks what it says:
// ungrouped workflows share a key, and a waiter is neither stuck nor queue
// lag.
func TestReadmeLimits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page, err := os.ReadFile("../docs/limits.md")
	require.NoError(t, err)
	text := string(page)
	block := text[strings.Index(text, "```sql\n")+len("```sql\n"):]
	block = block[:strings.Index(block, "```")]
	_, err = b.conn.Exec(b.ctx, block)
	require.NoError(t, err, "docs/limits.md's example")

	b.setNow(t, t0)
	ids := []int64{b.createIn(t, "TenantSync", "18", "acme"), b.createIn(t, "TenantSync", "19", "acme")}
	var ungrouped []int64
	for i := range 3 {
		ungrouped = append(ungrouped, b.create(t, "TenantSync", fmt.Sprint(100+i)))
	}
	for _, id := range append(ids, ungrouped...) {
		b.startStep(t, b.active(t, id).ID, nil)
	}
	var acme17 int64
	require.NoError(t, b.conn.QueryRow(b.ctx, "select id from geneva.workflows where hero_id = '17'").Scan(&acme17))
	_, ok := b.startStep(t, b.active(t, acme17).ID, nil)
	require.False(t, ok, "acme's third waits")
	require.NotNil(t, b.limitState(t, b.active(t, ungrouped[2]).ID).LimitWaitKey, "the ungrouped share one key")

	b.setNow(t, t0.Add(time.Hour))
	var stuck, lagging int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.stuck_executions").Scan(&stuck))
	require.NoError(t, b.conn.QueryRow(b.ctx, "select coalesce(sum(due_executions), 0) from geneva.queue_lag").Scan(&lagging))
	require.Zero(t, stuck)
	require.Zero(t, lagging)

	var charge int64
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflow('Checkout', 'Cart', '1')").Scan(&charge))
	require.Equal(t, "reserve", b.run(t, charge).StepName)
}

// TestLimitsWithEventsAndWaits: a step that awaits an event and is held to
// a limit waits for its event first, then for a slot; its own wait comes
// before both.
func TestLimitsWithEventsAndWaits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Approve", `{"concurrency": {"by": "type", "limit": 1}, "steps": [
		{"name": "decide", "wait": "1 hour", "await": {"event": "approved", "timeout": "1 day"}}
	]}`)
	first, second := b.create(t, "Approve", "1"), b.create(t, "Approve", "2")
	require.Equal(t, t0.Add(25*time.Hour), b.active(t, first).ScheduledFor, "its wait, then the event's timeout")

	b.setNow(t, t0.Add(2*time.Hour))
	require.True(t, b.sendEvent(t, first, "approved", "one"))
	require.True(t, b.sendEvent(t, second, "approved", "two"))
	started := b.run(t, first)
	require.JSONEq(t, `"one"`, string(started.EventPayload))

	// the second's event came, but the slot is taken: it waits, its event kept
	waiting := b.active(t, second)
	_, ok := b.startStep(t, waiting.ID, nil)
	require.False(t, ok)
	require.NotNil(t, b.limitState(t, waiting.ID).LimitWaitKey)
	events := b.events(t, second)
	require.Nil(t, events[0].ConsumedBy, "not consumed by a step that did not start")

	b.complete(t, started.ExecutionID, "success", nil)
	again, ok := b.startStep(t, waiting.ID, nil)
	require.True(t, ok, "woken when the first ended")
	require.JSONEq(t, `"two"`, string(again.EventPayload))
}

// tookWaiter is a row of geneva.complete_steps called as the worker calls it.
type tookWaiter struct {
	WorkflowState    string
	NextExecutionID  *int64
	NextStepName     *string
	NextWorkflowID   *int64
	NextWorkflowType *string
	NextHeroID       *string
	NextGroupName    *string
}

// oneHolderOneWaiter defines Sync, one step with a concurrency of 1 by type,
// at t0, and leaves one execution holding the key's slot and one waiting.
func (b *testBundle) oneHolderOneWaiter(t *testing.T) (holder, waiter int64) {
	t.Helper()
	b.setNow(t, t0)
	b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`)
	holder = b.active(t, b.create(t, "Sync", "1")).ID
	waiter = b.active(t, b.create(t, "Sync", "2")).ID
	_, ok := b.startStep(t, holder, nil)
	require.True(t, ok)
	_, ok = b.startStep(t, waiter, nil)
	require.False(t, ok)
	return holder, waiter
}

// txAtT0 begins a transaction on another connection, its clock at t0,
// rolled back at the test's end unless committed.
func (b *testBundle) txAtT0(t *testing.T) pgx.Tx {
	t.Helper()
	s := b.session(t)
	setNowOn(t, s.conn, t0)
	tx, err := s.conn.Begin(b.ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return tx
}

// takeWaiters completes a running execution as the worker does: a batch of
// one of complete_steps, continuing and taking a waiter of a freed slot.
func (b *testBundle) takeWaiters(t *testing.T, executionID int64) tookWaiter {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, `select workflow_state, next_execution_id, next_step_name, next_workflow_id,
		next_workflow_type, next_hero_id, next_group_name
		from geneva.complete_steps(array[$1::bigint], array['success'], array[null::interval], array[null::bigint],
			array[true], p_take_waiters => true)`, executionID)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[tookWaiter])
	require.NoError(t, err)
	return row
}

// TestLimitSlotsTakenWithoutTurns: a slot is a row numbered within its key's
// concurrency, kept when freed, so claims of a key with free slots take one
// each (FOR UPDATE SKIP LOCKED) without waiting for each other's commits (no
// key lock); a claim of a key whose last slot another claim is taking takes
// the key's lock, waits for that claim's commit, then finds the key full and
// waits for it as a waiter, and is woken when that slot frees.
func TestLimitSlotsTakenWithoutTurns(t *testing.T) {
	t.Parallel()

	t.Run("ClaimsOfAKeyWithRoomDoNotWaitForEachOther", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 10}, "steps": [{"name": "a"}]}`)
		// (two workflows run first: the key has rows, free)
		for i := range 2 {
			b.complete(t, b.run(t, b.create(t, "Sync", fmt.Sprint("warm", i))).ExecutionID, "success", nil)
		}
		first := b.active(t, b.create(t, "Sync", "1")).ID
		second := b.active(t, b.create(t, "Sync", "2")).ID
		_, err := b.conn.Exec(b.ctx, "set lock_timeout = '1s'")
		require.NoError(t, err)

		tx := b.txAtT0(t)
		_, ok, err := startStepOn(b.ctx, tx, first, nil)
		require.NoError(t, err)
		require.True(t, ok)
		// (the other claim's transaction is open: a lock it held until its
		// commit would fail this one with 55P03)
		_, ok = b.startStep(t, second, nil)
		require.True(t, ok, "started beside the open claim")
		require.NoError(t, tx.Commit(b.ctx))

		var slots, numbers int
		require.NoError(t, b.conn.QueryRow(b.ctx, `select count(*), count(distinct slot) from geneva.limit_slots
			where workflow_id is not null and slot between 1 and 10`).Scan(&slots, &numbers))
		require.Equal(t, 2, slots)
		require.Equal(t, 2, numbers, "each its own number")
	})

	t.Run("AClaimOfTheLastSlotInFlightWaitsAndIsWoken", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`)
		first := b.active(t, b.create(t, "Sync", "1")).ID
		second := b.active(t, b.create(t, "Sync", "2")).ID

		tx := b.txAtT0(t)
		_, ok, err := startStepOn(b.ctx, tx, first, nil)
		require.NoError(t, err)
		require.True(t, ok)
		// its one slot is being taken: the claim waits for the open one
		s := b.session(t)
		setNowOn(t, s.conn, t0)
		var started bool
		done := inBackground(func() error {
			var err error
			_, started, err = startStepOn(b.ctx, s.conn, second, nil)
			return err
		})
		b.waitBlocked(t, s)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, receive(t, done))
		require.False(t, started, "the key's one slot is the other claim's")
		require.NotNil(t, b.limitState(t, second).LimitWaitKey, "waits for the key")

		b.complete(t, first, "success", nil)
		woken := b.limitState(t, second)
		require.Nil(t, woken.LimitWaitKey, "woken by the free")
		require.Equal(t, []string{`["concurrency", "Sync", "Sync"]`}, woken.LimitKeys)
	})
}

// TestLimitFreeSeesAWaiterLeftMeanwhile: a free finds no one waiting (the
// claim that found the key full just before has not committed); the claim
// holds the key's lock FOR UPDATE (geneva.limit_keys), so the free's FOR KEY
// SHARE of it waits for its commit, and the free's look for waiters, a
// statement after, finds it and passes it the slot: no wake-up is lost.
func TestLimitFreeSeesAWaiterLeftMeanwhile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`)
	first := b.active(t, b.create(t, "Sync", "1")).ID
	second := b.active(t, b.create(t, "Sync", "2")).ID
	_, ok := b.startStep(t, first, nil)
	require.True(t, ok)

	// the second's claim, open: the key is full, it waits
	tx := b.txAtT0(t)
	_, ok, err := startStepOn(b.ctx, tx, second, nil)
	require.NoError(t, err)
	require.False(t, ok, "the key is full")

	// the first's end sees no one waiting (the claim has not committed):
	// its lock of the key waits for the claim
	s := b.session(t)
	setNowOn(t, s.conn, t0)
	done := inBackground(func() error {
		_, err := s.conn.Exec(b.ctx, "select * from geneva.complete_step($1, 'success', null)", first)
		return err
	})
	b.waitBlocked(t, s)
	require.NoError(t, tx.Commit(b.ctx))
	require.NoError(t, <-done)

	woken := b.limitState(t, second)
	require.Nil(t, woken.LimitWaitKey, "woken by the free")
	require.Equal(t, []string{`["concurrency", "Sync", "Sync"]`}, woken.LimitKeys, "holding the freed slot")
	require.NotNil(t, woken.JobID, "with a job")
}

// TestLimitEndWaitsForAFreeUnderWay: an end whose key has waiters takes the
// key's lock FOR UPDATE, so it waits for an end of the same key under way
// and then sees what it did: here a slot above a concurrency lowered since,
// deleted, which leaves the key full; so its next step waits behind the
// waiter its slot goes to, and is woken by that waiter's end: no wake-up is
// lost, and none is given past the bound.
func TestLimitEndWaitsForAFreeUnderWay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Pair", `{"concurrency": {"by": "type", "limit": 2}, "steps": [{"name": "a"}, {"name": "b"}]}`)
	w1, w2, w3 := b.create(t, "Pair", "1"), b.create(t, "Pair", "2"), b.create(t, "Pair", "3")

	// w1 holds a slot at its first step, w2 at its last; w3 waits
	b.run(t, w1)
	b.complete(t, b.run(t, w2).ExecutionID, "success", nil)
	w2Last := b.run(t, w2).ExecutionID
	_, ok := b.startStep(t, b.active(t, w3).ID, nil)
	require.False(t, ok, "the key is full")
	// the concurrency lowered: w2's slot, numbered 2, is above it
	b.define(t, "Pair", `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}, {"name": "b"}]}`)

	// another transaction ends w2, deleting its slot, open
	tx := b.txAtT0(t)
	_, err := tx.Exec(b.ctx, "select * from geneva.complete_step($1, 'success', null)", w2Last)
	require.NoError(t, err)

	// w1's step ends: it waits for tx, then its slot goes to w3, and its
	// next step waits behind (no job)
	s := b.session(t)
	setNowOn(t, s.conn, t0)
	w1First := b.active(t, w1).ID
	done := inBackground(func() error {
		_, err := s.conn.Exec(b.ctx, "select * from geneva.complete_step($1, 'success', null)", w1First)
		return err
	})
	b.waitBlocked(t, s)
	require.NoError(t, tx.Commit(b.ctx))
	require.NoError(t, receive(t, done))
	next := b.active(t, w1)
	require.Equal(t, "b", next.StepName)
	state := b.limitState(t, next.ID)
	require.NotNil(t, state.LimitWaitKey, "the key is full: w3 holds its one slot")
	require.Nil(t, state.JobID)
	require.Nil(t, b.limitState(t, b.active(t, w3).ID).LimitWaitKey, "w3 woken by w1's free")

	// w3's end wakes w1's next step
	b.complete(t, b.run(t, w3).ExecutionID, "success", nil)
	woken := b.limitState(t, next.ID)
	require.Nil(t, woken.LimitWaitKey, "woken by w3's free")
	require.NotNil(t, woken.JobID)
}

// TestLimitEndsOfAKeyWithWaitersTakeTurns: two ends of a full key with
// waiters, beside each other: the second waits for the first (the key's
// lock), then hands its slot to the next waiter, and its next step waits
// behind the one the first left waiting; each waiter is woken in turn by
// the frees after, oldest first.
func TestLimitEndsOfAKeyWithWaitersTakeTurns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Pair", `{"concurrency": {"by": "type", "limit": 2}, "steps": [{"name": "a"}, {"name": "b"}]}`)
	w1, w2 := b.create(t, "Pair", "1"), b.create(t, "Pair", "2")
	w3, w4 := b.create(t, "Pair", "3"), b.create(t, "Pair", "4")
	w1First := b.run(t, w1).ExecutionID
	w2First := b.run(t, w2).ExecutionID
	for _, w := range []int64{w3, w4} {
		_, ok := b.startStep(t, b.active(t, w).ID, nil)
		require.False(t, ok, "the key is full")
	}

	// another transaction ends w2's first step: its slot goes to w3, and
	// its next step waits; open
	tx := b.txAtT0(t)
	_, err := tx.Exec(b.ctx, "select * from geneva.complete_step($1, 'success', null)", w2First)
	require.NoError(t, err)

	// w1's step ends beside it: it waits for tx; then its slot goes to w4,
	// and its next step waits too
	s := b.session(t)
	setNowOn(t, s.conn, t0)
	done := inBackground(func() error {
		_, err := s.conn.Exec(b.ctx, "select * from geneva.complete_step($1, 'success', null)", w1First)
		return err
	})
	b.waitBlocked(t, s)
	require.NoError(t, tx.Commit(b.ctx))
	require.NoError(t, receive(t, done))
	w1Next := b.active(t, w1)
	state := b.limitState(t, w1Next.ID)
	require.NotNil(t, state.LimitWaitKey, "the key is full: w3's and w4's")
	require.Nil(t, state.JobID, "waits without a job")

	var holders []int64
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select array_agg(workflow_id order by workflow_id) from geneva.limit_slots where workflow_id is not null").Scan(&holders))
	require.Equal(t, []int64{w3, w4}, holders)

	// the frees wake the waiters oldest first: w2's next step, then w1's
	w2Next := b.active(t, w2)
	b.complete(t, b.run(t, w3).ExecutionID, "success", nil)
	require.Nil(t, b.limitState(t, w2Next.ID).LimitWaitKey, "woken by w3's free")
	require.NotNil(t, b.limitState(t, w1Next.ID).LimitWaitKey)
	b.complete(t, b.run(t, w4).ExecutionID, "success", nil)
	require.Nil(t, b.limitState(t, w1Next.ID).LimitWaitKey, "woken by w4's free")
}

// TestLimitSlotsOnePerWorkflow: a workflow holds one slot of a key at most,
// kept by a partial unique index (limit_slots_held): a second slot for it,
// taken or written, is refused.
func TestLimitSlotsOnePerWorkflow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 10}, "steps": [{"name": "a"}]}`)
	w := b.create(t, "Sync", "1")
	b.run(t, w)
	key := `["concurrency", "Sync", "Sync"]`

	for _, statement := range []string{
		"select count(*) from geneva._limit_take(array[$1], array[$2::bigint])",
		`insert into geneva.limit_slots (limit_key, slot, workflow_id)
			select $1, min(g), $2 from generate_series(1, 10) g
			where not exists (select from geneva.limit_slots ls where ls.limit_key = $1 and ls.slot = g)`,
	} {
		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select set_config('geneva.limiting', 'on', true)")
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, statement, key, w)
		pgErr := requireCode(t, err, "23505") // a second slot of the key for the workflow
		require.Equal(t, "limit_slots_held", pgErr.ConstraintName)
		require.NoError(t, tx.Rollback(b.ctx))
	}
}

// A key's slots are taken and freed again and again (a workflow's each): each
// take and free updates a slot's row, so the key's index entries include
// those of every version since the last vacuum. A claim looks up the key's
// free slots, and counts its held ones when it takes a slot under the key's
// lock: those lookups read the dead entries, find their rows dead and mark
// them so, and the next claim's skip them. (A bitmap scan never marks them:
// every claim read them all again, thousands in a busy run; the limits'
// functions plan none.) An entry is marked only once its row is dead to
// every transaction that may still see it: one in any database that began
// before the free and is still running keeps it, so the test claims until
// a claim skips them (under load, other tests' transactions end within
// seconds; with bitmap scans no claim ever does).
func TestLimitFreedSlotsAreReadOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 100000}, "steps": [{"name": "a"}]}`)

	// a slot of the key taken and freed 1,000 times, as 1,000 workflows'
	// steps would
	tx, err := b.conn.Begin(b.ctx)
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, "select set_config('geneva.limiting', 'on', true)")
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, `insert into geneva.limit_slots (limit_key, slot) values ('["concurrency", "Sync", "Sync"]', 1)`)
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, `do $$ begin
		for i in 1 .. 1000 loop
		  update geneva.limit_slots set workflow_id = -i;
		  update geneva.limit_slots set workflow_id = null;
		end loop;
		end $$`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(b.ctx))

	// the index entries a claim's statements read (this transaction's): a
	// lookup that read the dead ones would read 1,000 of each index, one
	// that skips them a few hundred at most
	// (entries on a page the claim itself changed before it left it are
	// not marked)
	// (each claim a new session's: a session recomputes which rows are dead
	// to every transaction only when the oldest it knows of ends)
	claims := 0
	read := func() int64 {
		claims++
		executionID := b.active(t, b.create(t, "Sync", fmt.Sprint(claims))).ID
		s := b.session(t)
		defer func() { _ = s.conn.Close(context.Background()) }()
		setNowOn(t, s.conn, t0)
		tx, err := s.conn.Begin(b.ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(context.Background()) }()
		_, ok, err := startStepOn(b.ctx, tx, executionID, nil)
		require.NoError(t, err)
		require.True(t, ok)
		var entries int64
		require.NoError(t, tx.QueryRow(b.ctx, `select sum(pg_stat_get_xact_tuples_returned(i.indexrelid))::bigint
			from pg_index i where i.indrelid = 'geneva.limit_slots'::regclass`).Scan(&entries))
		require.NoError(t, tx.Commit(b.ctx))
		return entries
	}
	deadline := time.Now().Add(30 * time.Second)
	for entries := read(); entries >= 1000; entries = read() {
		require.True(t, time.Now().Before(deadline),
			"after %d claims, a claim still reads %d entries: the freed slots' are never skipped", claims, entries)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLimitWaitKeyOnlyWhileScheduled: an execution names the slot it waits
// for (limit_wait_key) only while scheduled, which the lookups of a key's
// waiters rely on (step_executions_limit_waiting): a waiter that ends
// waits no more, and a row that breaks the rule is refused with 23514.
func TestLimitWaitKeyOnlyWhileScheduled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "a"}]}`)
	holder := b.active(t, b.createIn(t, "Sync", "1", "acme")).ID
	waiting := b.createIn(t, "Sync", "2", "acme")
	waiter := b.active(t, waiting).ID
	_, ok := b.startStep(t, holder, nil)
	require.True(t, ok)
	_, ok = b.startStep(t, waiter, nil)
	require.False(t, ok, "the key is full: it waits")
	require.NotNil(t, b.limitState(t, waiter).LimitWaitKey)

	b.call(t, "cancel_workflow", waiting)
	s := b.limitState(t, waiter)
	require.Equal(t, "canceled", s.State)
	require.Nil(t, s.LimitWaitKey, "a waiter that ended waits no more")

	_, err := b.conn.Exec(b.ctx, `update geneva.step_executions set limit_wait_key = '["concurrency", "Sync", "acme"]'
		where id = $1`, holder)
	pgErr := requireCode(t, err, "23514")
	require.Equal(t, "step_executions_state_valid", pgErr.ConstraintName)
	require.Equal(t, "in_progress", b.limitState(t, holder).State)
}

// TestLimitWaitersAreReadByTheirIndex: an end and a free look for their
// key's waiters without naming the state (a waiter is scheduled, which
// step_executions_state_valid holds), so that no index of scheduled
// executions can serve them. Lookups that said state = 'scheduled' were
// planned on step_executions_scheduled_for whenever the statistics made it
// look cheaper than step_executions_limit_waiting (in the benchmark, after a
// run that left the second's pages behind), and then read every scheduled
// execution at each end. Here the waiters' index is dropped, in a
// transaction rolled back, so that the planner has only the others to
// choose from. And a waiter's workflow is read by its key, after the
// waiter: with statistics taken while no workflow was ready, a join of
// waiters and workflows was planned as a walk of every workflow.
func TestLimitWaitersAreReadByTheirIndex(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "a"}, {"name": "b"}]}`)
	b.define(t, "Other", `{"steps": [{"name": "a"}]}`)
	// the statistics of tables whose workflows have all ended
	_, err := b.conn.Exec(b.ctx, `select geneva.cancel_workflow(id)
		from unnest(geneva.create_workflows('Other', 'User', array(select 'ended' || g from generate_series(1, 500) g))) id`)
	require.NoError(t, err)
	_, err = b.conn.Exec(b.ctx, "analyze geneva.workflows, geneva.step_executions")
	require.NoError(t, err)
	// 1,000 executions scheduled that wait for no slot, then a key's holder
	// and its waiter
	_, err = b.conn.Exec(b.ctx, `select geneva.create_workflows('Other', 'User',
		array(select g::text from generate_series(1, 1000) g))`)
	require.NoError(t, err)
	holder := b.active(t, b.createIn(t, "Sync", "1", "acme")).ID
	waiter := b.active(t, b.createIn(t, "Sync", "2", "acme")).ID
	_, ok := b.startStep(t, holder, nil)
	require.True(t, ok)
	_, ok = b.startStep(t, waiter, nil)
	require.False(t, ok, "the key is full: it waits")

	// the holder's end, in a new session: its next step waits behind the
	// waiter, whose workflow's worker runs it next
	tx := b.txAtT0(t)
	_, err = tx.Exec(b.ctx, "drop index geneva.step_executions_limit_waiting")
	require.NoError(t, err)
	var next *int64
	require.NoError(t, tx.QueryRow(b.ctx, `select next_execution_id
		from geneva.complete_steps(array[$1::bigint], array['success'], array[null::interval], array[null::bigint],
			array[true], p_take_waiters => true)`, holder).Scan(&next))
	require.NotNil(t, next)
	require.Equal(t, waiter, *next, "the waiter runs next")
	var scheduled, workflows int64
	require.NoError(t, tx.QueryRow(b.ctx, `select
		pg_stat_get_xact_tuples_returned('geneva.step_executions_scheduled_for'::regclass),
		pg_stat_get_xact_tuples_returned('geneva.workflows_pkey'::regclass)`).Scan(&scheduled, &workflows))
	require.Zero(t, scheduled, "entries of scheduled executions read to find the key's waiters")
	require.Less(t, workflows, int64(100), "entries of workflows read to find the key's waiters' workflows")
}
