package tests

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// startedRow is a row of geneva.start_steps.
type startedRow struct {
	Ordinality int32
	startedStep
}

func startSteps(ctx context.Context, db queryer, ids []int64, preconditions []*string) ([]startedRow, error) {
	rows, err := db.Query(ctx, "select * from geneva.start_steps($1, $2)", ids, preconditions)
	if err != nil {
		return nil, err
	}
	all, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (startedRow, error) {
		var r startedRow
		s := &r.startedStep
		err := row.Scan(&r.Ordinality, &s.ExecutionID, &s.WorkflowID, &s.WorkflowType, &s.HeroType, &s.HeroID,
			&s.StepName, &s.Attempt, &s.ScheduledFor, &s.StartedAt, &s.Cursor, &s.ContinuesFromID, &s.Queue,
			&s.TraceContext, &s.EventID, &s.EventName, &s.EventPayload, &s.EventSentAt, &s.Group, &s.HTTP, &s.IdempotencyKey,
			&s.EventSentBy)
		return r, err
	})
	slices.SortFunc(all, func(a, b startedRow) int { return int(a.Ordinality - b.Ordinality) })
	return all, err
}

func TestStartSteps(t *testing.T) {
	t.Parallel()

	// Every kind of claim, made once by start_step for one workflow and once
	// by one start_steps call for its twin (all twins in the same call),
	// leaves the same rows and answers the same.
	t.Run("StartsAsStartStepDoes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Three", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "queue": "q1"}`)
		b.define(t, "Later", `{"steps": [{"name": "a", "wait": "1 hour"}]}`)
		b.define(t, "AlwaysSkips", `{"steps": [{"name": "a", "skip_if": true}, {"name": "b"}]}`)
		b.define(t, "Gone", `{"steps": [{"name": "a"}, {"name": "b"}]}`)

		type scenario struct {
			name, workflowType string
			precondition       *string
			prepare            func(workflowID, executionID int64)
		}
		call := func(function string) func(int64, int64) {
			return func(workflowID, _ int64) { b.call(t, function, workflowID) }
		}
		started := func(_, executionID int64) {
			_, ok := b.startStep(t, executionID, nil)
			require.True(t, ok)
		}
		scenarios := []scenario{
			{name: "due", workflowType: "Three"},
			{name: "not due", workflowType: "Later"},
			{name: "paused", workflowType: "Three", prepare: call("pause_workflow")},
			{name: "canceled", workflowType: "Three", prepare: call("cancel_workflow")},
			{name: "cancel_if", workflowType: "Three", precondition: ptr("cancel")},
			{name: "skip_if", workflowType: "Three", precondition: ptr("skip")},
			{name: "hero missing", workflowType: "Three", precondition: ptr("hero_missing")},
			{name: "skip_if true", workflowType: "AlwaysSkips"},
			{name: "started twice", workflowType: "Three", prepare: started},
		}

		var ids [2][]int64
		var workflows [2][]int64
		var preconditions []*string
		for i, s := range scenarios {
			for k := range 2 {
				id := b.create(t, s.workflowType, fmt.Sprintf("%d-%d", i, k))
				execution := b.active(t, id).ID
				if s.prepare != nil {
					s.prepare(id, execution)
				}
				ids[k] = append(ids[k], execution)
				workflows[k] = append(workflows[k], id)
			}
			preconditions = append(preconditions, s.precondition)
		}
		// a step removed by a later definition
		for k := range 2 {
			id := b.create(t, "Gone", fmt.Sprint("gone-", k))
			ids[k] = append(ids[k], b.active(t, id).ID)
			workflows[k] = append(workflows[k], id)
		}
		preconditions = append(preconditions, nil)
		scenarios = append(scenarios, scenario{name: "step not defined"})
		b.define(t, "Gone", `{"steps": [{"name": "b"}]}`)

		b.setNow(t, t0.Add(time.Second))
		var singles []*startedStep
		for i, id := range ids[0] {
			row, ok := b.startStep(t, id, preconditions[i])
			if ok {
				singles = append(singles, &row)
			} else {
				singles = append(singles, nil)
			}
		}
		rows, err := startSteps(b.ctx, b.conn, ids[1], preconditions)
		require.NoError(t, err)
		batched := make([]*startedStep, len(ids[1]))
		for _, row := range rows {
			batched[row.Ordinality-1] = &row.startedStep
		}

		for i, s := range scenarios {
			want, got := singles[i], batched[i]
			require.Equal(t, want == nil, got == nil, s.name)
			if want != nil {
				require.Equal(t, ids[1][i], got.ExecutionID, s.name)
				require.Equal(t, workflows[1][i], got.WorkflowID, s.name)
				w, g := *want, *got
				w.ExecutionID, w.WorkflowID, w.HeroID, g.ExecutionID, g.WorkflowID, g.HeroID = 0, 0, "", 0, 0, ""
				require.Equal(t, want.ExecutionID, *want.IdempotencyKey, s.name)
				require.Equal(t, got.ExecutionID, *got.IdempotencyKey, s.name)
				w.IdempotencyKey, g.IdempotencyKey = nil, nil
				require.Equal(t, w, g, s.name)
			}
			require.Equal(t, b.snapshot(t, workflows[0][i]), b.snapshot(t, workflows[1][i]), s.name)
		}
	})

	t.Run("OneBadElementRecordsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		first := b.active(t, b.create(t, "ThreeSteps", "1")).ID
		for _, bad := range [][]any{
			{[]int64{first, 123456}, []*string{nil, nil}, "P0002"},
			{[]int64{first, first}, []*string{nil, nil}, "22023"},
			{[]int64{first}, []*string{ptr("later")}, "22023"},
			{[]int64{first}, []*string{nil, nil}, "22023"},
		} {
			_, err := startSteps(b.ctx, b.conn, bad[0].([]int64), bad[1].([]*string))
			requireCode(t, err, bad[2].(string))
		}
		require.Equal(t, "scheduled", b.execution(t, first).State, "nothing recorded")
	})
}
