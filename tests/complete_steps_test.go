package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// batchRow is a row of geneva.complete_steps.
type batchRow struct {
	Ordinality int32
	continued
}

// completeSteps calls geneva.complete_steps with one element per report and
// returns its rows by position.
func completeSteps(ctx context.Context, db queryer, reports []report) ([]batchRow, error) {
	ids := make([]int64, len(reports))
	signals := make([]string, len(reports))
	waits := make([]*time.Duration, len(reports))
	jobs := make([]*int64, len(reports))
	cont := make([]bool, len(reports))
	for i, r := range reports {
		ids[i], signals[i], waits[i], jobs[i], cont[i] = r.executionID, r.signal, r.wait, r.jobID, r.cont
	}
	rows, err := db.Query(ctx, `select ordinality, outcome, workflow_state, next_execution_id, next_step_name, next_attempt,
		next_started_at, next_cursor, next_continues_from_id, next_event_id, next_event_name, next_event_payload,
		next_event_sent_at, next_http
		from geneva.complete_steps($1, $2, $3, $4, $5)`, ids, signals, waits, jobs, cont)
	if err != nil {
		return nil, err
	}
	all, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (batchRow, error) {
		var r batchRow
		err := row.Scan(&r.Ordinality, &r.Outcome, &r.WorkflowState, &r.NextExecutionID, &r.NextStepName,
			&r.NextAttempt, &r.NextStartedAt, &r.NextCursor, &r.NextContinuesFromID,
			&r.NextEventID, &r.NextEventName, &r.NextEventPayload, &r.NextEventSentAt, &r.NextHTTP)
		return r, err
	})
	// the rows come in the order of the locks; the ordinality is the position
	slices.SortFunc(all, func(a, b batchRow) int { return int(a.Ordinality - b.Ordinality) })
	return all, err
}

// report is one element of a complete_steps call, or one single call.
type report struct {
	executionID int64
	signal      string
	wait        *time.Duration
	jobID       *int64
	cont        bool
}

// single records r as one complete_step or complete_and_continue call would.
func (b *testBundle) single(t *testing.T, r report) continued {
	t.Helper()
	function := "complete_step"
	if r.cont {
		function = "complete_and_continue"
	}
	rows, err := b.conn.Query(b.ctx, "select * from geneva."+function+"($1, $2, $3, $4)", r.executionID, r.signal, r.wait, r.jobID)
	require.NoError(t, err)
	if !r.cont {
		row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[completed])
		require.NoError(t, err)
		return continued{Outcome: row.Outcome, WorkflowState: row.WorkflowState}
	}
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[continued])
	require.NoError(t, err)
	return row
}

// snapshot is what a workflow's recording left behind, without ids, so that
// two workflows brought to the same place can be compared.
type snapshot struct {
	Workflow   workflowRow
	Executions []executionRow
	// Jobs are each execution's River job: its state, kind, queue, priority,
	// attempts and arguments but the ids ("" for none)
	Jobs []string
}

func (b *testBundle) snapshot(t *testing.T, workflowID int64) snapshot {
	t.Helper()
	s := snapshot{Workflow: b.workflow(t, workflowID), Executions: b.executions(t, workflowID)}
	s.Workflow.ID = 0
	for i := range s.Executions {
		e := &s.Executions[i]
		job := ""
		if e.JobID != nil {
			require.NoError(t, b.conn.QueryRow(b.ctx, `
				select concat_ws(' ', state, kind, queue, priority, max_attempts, metadata, tags,
				  args - 'execution_id' - 'workflow_id' - 'hero_id')
				from public.river_job where id = $1`, *e.JobID).Scan(&job))
		}
		s.Jobs = append(s.Jobs, job)
		e.ID, e.JobID, e.ContinuesFromID = 0, nil, nil
	}
	return s
}

// runningJob starts the execution's River job as River would, and returns
// its id.
func (b *testBundle) runningJob(t *testing.T, executionID int64) *int64 {
	t.Helper()
	var id int64
	require.NoError(t, b.conn.QueryRow(b.ctx, `
		update public.river_job set state = 'running', attempted_at = now(), attempt = 1
		where (args->>'execution_id')::bigint = $1 returning id`, executionID).Scan(&id))
	return &id
}

func TestCompleteSteps(t *testing.T) {
	t.Parallel()

	// Every kind of report, recorded once by the single functions for one
	// workflow and once by one complete_steps call for its twin (all the
	// twins in the same call), leaves the same rows and answers the same.
	t.Run("RecordsAsTheSingleCallsDo", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Three", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)
		b.define(t, "One", `{"steps": [{"name": "a"}]}`)
		b.define(t, "Waits", `{"steps": [{"name": "a"}, {"name": "b", "wait": "1 hour"}]}`)
		b.define(t, "Canceling", `{"steps": [{"name": "a"}, {"name": "b"}], "cancel_if": ["closed"]}`)
		b.define(t, "Skipping", `{"steps": [{"name": "a"}, {"name": "b", "skip_if": "condition"}]}`)

		minute := time.Minute
		type scenario struct {
			name, workflowType, signal string
			wait                       *time.Duration
			cont, withJob              bool
			// prepare runs on the workflow and its running execution before
			// the report
			prepare func(workflowID, executionID int64)
		}
		call := func(function string) func(int64, int64) {
			return func(workflowID, _ int64) { b.call(t, function, workflowID) }
		}
		checkpoint := func(_, executionID int64) {
			_, err := b.conn.Exec(b.ctx, `select geneva.checkpoint_step($1, '{"page": 2}')`, executionID)
			require.NoError(t, err)
		}
		reported := func(_, executionID int64) {
			b.single(t, report{executionID: executionID, signal: "success"})
		}
		var scenarios []scenario
		for _, cont := range []bool{false, true} {
			for _, withJob := range []bool{false, true} {
				scenarios = append(scenarios,
					scenario{name: "success", workflowType: "Three", signal: "success"},
					scenario{name: "last step", workflowType: "One", signal: "success"},
					scenario{name: "finished", workflowType: "Three", signal: "finished"},
					scenario{name: "reattempt", workflowType: "Three", signal: "reattempt", wait: &minute},
					scenario{name: "reattempt now", workflowType: "Three", signal: "reattempt"},
					scenario{name: "rewind", workflowType: "Three", signal: "reattempt_rewind", prepare: checkpoint},
					scenario{name: "suspend", workflowType: "Three", signal: "suspend", wait: &minute, prepare: checkpoint},
					scenario{name: "suspend now", workflowType: "Three", signal: "suspend", prepare: checkpoint},
					scenario{name: "skip", workflowType: "Three", signal: "skip"},
					scenario{name: "cancel", workflowType: "Three", signal: "cancel"},
					scenario{name: "pause", workflowType: "Three", signal: "pause"},
					scenario{name: "pause requested", workflowType: "Three", signal: "success", prepare: call("pause_workflow")},
					scenario{name: "cancel requested", workflowType: "Three", signal: "success", prepare: call("cancel_workflow")},
					scenario{name: "cancel requested, last", workflowType: "One", signal: "success", prepare: call("cancel_workflow")},
					scenario{name: "next waits", workflowType: "Waits", signal: "success"},
					scenario{name: "cancel_if", workflowType: "Canceling", signal: "success"},
					scenario{name: "skip_if", workflowType: "Skipping", signal: "success"},
					scenario{name: "reported twice", workflowType: "Three", signal: "success", prepare: reported},
				)
				for i := len(scenarios) - 18; i < len(scenarios); i++ {
					scenarios[i].cont, scenarios[i].withJob = cont, withJob
				}
			}
		}

		// each scenario's twins, brought to the same place
		type twins struct{ single, batched report }
		var pairs []twins
		var singleIDs, batchedIDs []int64
		for i, s := range scenarios {
			var pair [2]report
			for k := range pair {
				id := b.create(t, s.workflowType, fmt.Sprintf("%d-%d", i, k))
				r := report{signal: s.signal, wait: s.wait, cont: s.cont}
				if s.withJob {
					r.jobID = b.runningJob(t, b.active(t, id).ID)
				}
				r.executionID = b.run(t, id).ExecutionID
				if s.prepare != nil {
					s.prepare(id, r.executionID)
				}
				pair[k] = r
				if k == 0 {
					singleIDs = append(singleIDs, id)
				} else {
					batchedIDs = append(batchedIDs, id)
				}
			}
			pairs = append(pairs, twins{pair[0], pair[1]})
		}

		b.setNow(t, t0.Add(time.Second))
		var singles []continued
		batch := make([]report, len(pairs))
		for i, p := range pairs {
			singles = append(singles, b.single(t, p.single))
			batch[len(pairs)-1-i] = p.batched // out of order on purpose
		}
		rows, err := completeSteps(b.ctx, b.conn, batch)
		require.NoError(t, err)
		require.Len(t, rows, len(pairs))

		for i, s := range scenarios {
			name := fmt.Sprintf("%s (continue %v, job %v)", s.name, s.cont, s.withJob)
			row := rows[len(pairs)-1-i]
			require.EqualValues(t, len(pairs)-i, row.Ordinality, name)
			want, got := singles[i], row.continued
			require.Equal(t, want.Outcome, got.Outcome, name)
			require.Equal(t, want.WorkflowState, got.WorkflowState, name)
			require.Equal(t, want.NextExecutionID == nil, got.NextExecutionID == nil, name)
			require.Equal(t, want.NextStepName, got.NextStepName, name)
			require.Equal(t, want.NextAttempt, got.NextAttempt, name)
			require.Equal(t, want.NextStartedAt, got.NextStartedAt, name)
			require.Equal(t, string(want.NextCursor), string(got.NextCursor), name)
			require.Equal(t, want.NextContinuesFromID == nil, got.NextContinuesFromID == nil, name)
			require.Equal(t, b.snapshot(t, singleIDs[i]), b.snapshot(t, batchedIDs[i]), name)
		}
	})

	// A step's error (fail_step's), a give-back (interrupt_step's) and a
	// reply's cursor saved as the step ends (checkpoint_step's, then
	// complete_step's) ride in the same call as the other ends, and leave
	// what the single calls leave.
	t.Run("CarriesFailuresInterruptsAndCursorsAsTheSingleCallsDo", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Policies", `{"steps": [{"name": "a", "on_exception": [
			{"matching": ["Retry"], "action": "reattempt", "wait": "1 minute", "max_reattempts": 3, "report": "terminal_only"},
			{"matching": ["Skip"], "action": "skip"},
			{"action": "cancel"}
		]}, {"name": "b"}]}`)
		b.define(t, "Handled", `{"steps": [{"name": "a", "on_exception": {"handler": "decide"}}, {"name": "b"}]}`)

		type element struct {
			signal *string
			wait   *time.Duration
			error  *string // JSON, as fail_step's arguments
			cursor *string
			// replyWait is the reply's wait, as JSON (the single calls take
			// wait, as parse_wait reads it)
			replyWait *string
			jobID     *int64
			classes   []string
		}
		errorOf := func(classes []string, atLeast string) *string {
			e := map[string]any{"classes": classes, "chain": classes, "message": "boom", "backtrace": "stack trace"}
			if atLeast != "" {
				e["wait_at_least"] = atLeast
			}
			out, err := json.Marshal(e)
			require.NoError(t, err)
			return ptr(string(out))
		}
		type scenario struct {
			name, workflowType string
			element            element
			single             func(r element, executionID int64) failed
			prepare            func(workflowID, executionID int64)
		}
		fail := func(r element, executionID int64) failed {
			var atLeast *time.Duration
			if r.error != nil && strings.Contains(*r.error, "wait_at_least") {
				atLeast = ptr(5 * time.Minute)
			}
			rows, err := b.conn.Query(b.ctx, `select * from geneva.fail_step($1, $2, 'boom', 'stack trace', $3, $4,
				p_job_id => $5, p_wait_at_least => $6)`, executionID, r.classes, r.signal, r.wait, r.jobID, atLeast)
			require.NoError(t, err)
			row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[failed])
			require.NoError(t, err)
			return row
		}
		interrupt := func(r element, executionID int64) failed {
			var f failed
			require.NoError(t, b.conn.QueryRow(b.ctx, "select outcome, workflow_state from geneva.interrupt_step($1, $2)",
				executionID, r.jobID).Scan(&f.Outcome, &f.WorkflowState))
			return f
		}
		checkpointThenComplete := func(r element, executionID int64) failed {
			if r.cursor != nil {
				_, err := b.conn.Exec(b.ctx, "select geneva.checkpoint_step($1, $2::jsonb)", executionID, r.cursor)
				require.NoError(t, err)
			}
			var f failed
			require.NoError(t, b.conn.QueryRow(b.ctx, "select outcome, workflow_state from geneva.complete_step($1, $2, $3, $4)",
				executionID, r.signal, r.wait, r.jobID).Scan(&f.Outcome, &f.WorkflowState))
			return f
		}
		pause := func(workflowID, _ int64) { b.call(t, "pause_workflow", workflowID) }
		reported := func(_, executionID int64) {
			b.single(t, report{executionID: executionID, signal: "success"})
		}
		minute := time.Minute
		scenarios := []scenario{
			{name: "reattempt", workflowType: "Policies", single: fail,
				element: element{classes: []string{"Retry"}, error: errorOf([]string{"Retry"}, "")}},
			{name: "reattempt waits at least", workflowType: "Policies", single: fail,
				element: element{classes: []string{"Retry"}, error: errorOf([]string{"Retry"}, "00:05:00")}},
			{name: "skip", workflowType: "Policies", single: fail,
				element: element{classes: []string{"Skip"}, error: errorOf([]string{"Skip"}, "")}},
			{name: "blanket cancel", workflowType: "Policies", single: fail,
				element: element{classes: []string{"Other"}, error: errorOf([]string{"Other"}, "")}},
			{name: "pause requested", workflowType: "Policies", single: fail, prepare: pause,
				element: element{classes: []string{"Retry"}, error: errorOf([]string{"Retry"}, "")}},
			{name: "moved on", workflowType: "Policies", single: fail, prepare: reported,
				element: element{classes: []string{"Retry"}, error: errorOf([]string{"Retry"}, "")}},
			{name: "handler asked", workflowType: "Handled", single: fail,
				element: element{classes: []string{"Boom"}, error: errorOf([]string{"Boom"}, "")}},
			{name: "handler decided", workflowType: "Handled", single: fail,
				element: element{classes: []string{"Boom"}, error: errorOf([]string{"Boom"}, ""), signal: ptr("reattempt"), wait: &minute}},
			{name: "interrupt", workflowType: "Policies", single: interrupt,
				element: element{signal: ptr("interrupt")}},
			{name: "suspend with a cursor", workflowType: "Policies", single: checkpointThenComplete,
				element: element{signal: ptr("suspend"), cursor: ptr(`{"page": 3}`)}},
			{name: "success with a cursor", workflowType: "Policies", single: checkpointThenComplete,
				element: element{signal: ptr("success"), cursor: ptr(`{"page": 4}`)}},
			{name: "reattempt with a reply's wait", workflowType: "Policies", single: checkpointThenComplete,
				element: element{signal: ptr("reattempt"), wait: &minute, cursor: ptr(`{"page": 5}`), replyWait: ptr(`"1 minute"`)}},
			{name: "skip ignores a reply's wait", workflowType: "Policies", single: checkpointThenComplete,
				element: element{signal: ptr("skip"), replyWait: ptr(`90`)}},
		}

		var singles []failed
		var ids, executions [2][]int64
		var elements []element
		for i, s := range scenarios {
			for k := range 2 {
				id := b.create(t, s.workflowType, fmt.Sprintf("%d-%d", i, k))
				r := s.element
				r.jobID = b.runningJob(t, b.active(t, id).ID)
				executionID := b.run(t, id).ExecutionID
				if s.prepare != nil {
					s.prepare(id, executionID)
				}
				ids[k], executions[k] = append(ids[k], id), append(executions[k], executionID)
				if k == 0 {
					singles = append(singles, s.single(r, executionID))
				} else {
					elements = append(elements, r)
				}
			}
		}

		n := len(elements)
		signals, waits, jobs := make([]*string, n), make([]*time.Duration, n), make([]*int64, n)
		errs, cursors, cont := make([]*string, n), make([]*string, n), make([]bool, n)
		for i, r := range elements {
			signals[i], waits[i], jobs[i], errs[i] = r.signal, r.wait, r.jobID, r.error
			if r.cursor != nil || r.replyWait != nil {
				waits[i] = nil // the reply's, read by SQL
				reply := map[string]json.RawMessage{}
				if r.cursor != nil {
					reply["cursor"] = json.RawMessage(*r.cursor)
				}
				if r.replyWait != nil {
					reply["wait"] = json.RawMessage(*r.replyWait)
				}
				out, err := json.Marshal(reply)
				require.NoError(t, err)
				cursors[i] = ptr(string(out))
			}
		}
		rows, err := b.conn.Query(b.ctx, `select ordinality, action, outcome, coalesce(report, false), workflow_state, handler
			from geneva.complete_steps($1, $2, $3, $4, $5, false, $6::jsonb[], $7::jsonb[]) order by ordinality`,
			executions[1], signals, waits, jobs, cont, errs, cursors)
		require.NoError(t, err)
		type row struct {
			Ordinality int32
			failed
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var x row
			err := r.Scan(&x.Ordinality, &x.Action, &x.Outcome, &x.Report, &x.WorkflowState, &x.Handler)
			return x, err
		})
		require.NoError(t, err)
		require.Len(t, got, n)
		for i, s := range scenarios {
			require.Equal(t, singles[i], got[i].failed, s.name)
			require.Equal(t, b.snapshot(t, ids[0][i]), b.snapshot(t, ids[1][i]), s.name)
			var classes [2][]string
			for k := range 2 {
				require.NoError(t, b.conn.QueryRow(b.ctx, "select error_classes from geneva.step_executions where id = $1",
					executions[k][i]).Scan(&classes[k]))
			}
			require.Equal(t, classes[0], classes[1], s.name)
		}
		require.Equal(t, failed{Action: ptr("handler"), WorkflowState: "performing", Handler: ptr("decide")}, got[6].failed)
		require.Equal(t, "running", b.job(t, *elements[6].jobID).State, "an ask leaves the job to the worker")
		require.Equal(t, "completed", b.job(t, *elements[7].jobID).State)
		require.Equal(t, `{"page": 3}`, string(b.active(t, ids[1][9]).Cursor), "the successor continues from the reply's cursor")
	})

	t.Run("OneBadElementRecordsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		first := b.run(t, b.create(t, "ThreeSteps", "1"))
		second := b.run(t, b.create(t, "ThreeSteps", "2"))

		// a job that ran another workflow's step (the set-wise path checks
		// it too)
		otherJob := b.runningJob(t, b.active(t, b.create(t, "ThreeSteps", "3")).ID)
		for _, bad := range []report{
			{executionID: second.ExecutionID, signal: "success", jobID: otherJob},
			{executionID: second.ExecutionID, signal: "later"},
			{executionID: second.ExecutionID, signal: "skip", wait: ptr(time.Minute)},
			{executionID: 123456, signal: "success"},
		} {
			_, err := completeSteps(b.ctx, b.conn, []report{{executionID: first.ExecutionID, signal: "success"}, bad})
			require.Error(t, err)
		}
		require.Equal(t, "in_progress", b.execution(t, first.ExecutionID).State, "nothing recorded")
		require.Equal(t, "in_progress", b.execution(t, second.ExecutionID).State)
	})

	t.Run("RefusesMalformedArrays", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.run(t, b.create(t, "ThreeSteps", "1")).ExecutionID
		for query, code := range map[string]string{
			"select * from geneva.complete_steps(array[$1::bigint], array['success'], array[null::interval], array[null::bigint], array[false, true])":                               "22023",
			"select * from geneva.complete_steps(array[$1::bigint, $1], array['success', 'success'], array[null::interval, null], array[null::bigint, null], array[false, false])":   "22023",
			"select * from geneva.complete_steps(array[$1::bigint, null], array['success', 'success'], array[null::interval, null], array[null::bigint, null], array[false, false])": "22004",
			"select * from geneva.complete_steps(null, array['success'], array[null::interval], array[null::bigint], array[false]) where $1::bigint is not null":                     "22004",
		} {
			_, err := b.conn.Exec(b.ctx, query, id)
			requireCode(t, err, code)
		}
		rows, err := completeSteps(b.ctx, b.conn, nil)
		require.NoError(t, err)
		require.Empty(t, rows, "an empty batch records nothing")
		require.Equal(t, "in_progress", b.execution(t, id).State)
	})

	// Batches naming the same executions in opposite orders, at once, and an
	// operator pausing their workflows meanwhile: every lock is taken in the
	// one order, so none deadlocks, and each execution is recorded once.
	t.Run("ConcurrentBatchesDoNotDeadlock", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		const n = 40
		var forward []report
		var workflows []int64
		for i := range n {
			id := b.create(t, "ThreeSteps", fmt.Sprint(i))
			workflows = append(workflows, id)
			forward = append(forward, report{executionID: b.run(t, id).ExecutionID, signal: "success", cont: i%2 == 0})
		}
		backward := make([]report, n)
		for i, r := range forward {
			backward[n-1-i] = r
		}

		var wg sync.WaitGroup
		results := make([][]batchRow, 4)
		errs := make([]error, 5)
		for k := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				batch := forward
				if k%2 == 1 {
					batch = backward
				}
				results[k], errs[k] = completeSteps(b.ctx, b.pool, batch)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, id := range workflows[n/2:] {
				if _, err := b.pool.Exec(b.ctx, "select geneva.pause_workflow($1)", id); err != nil {
					errs[4] = err
					return
				}
			}
		}()
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		recorded := map[int64]int{}
		for k, rows := range results {
			for _, row := range rows {
				if row.Outcome != nil {
					batch := forward
					if k%2 == 1 {
						batch = backward
					}
					recorded[batch[row.Ordinality-1].executionID]++
				}
			}
		}
		for _, r := range forward {
			require.Equal(t, 1, recorded[r.executionID], "execution %d recorded once", r.executionID)
			e := b.execution(t, r.executionID)
			require.Equal(t, "completed", e.State)
		}
	})
}
