package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// moveToHistory moves ended workflows into history as housekeeping's move
// does (geneva._move_to_history, called as the schema's owner) and returns
// the ids moved.
func (b *testBundle) moveToHistory(t *testing.T, ids ...int64) []int64 {
	t.Helper()
	var moved []int64
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva._move_to_history($1)", ids).Scan(&moved))
	return moved
}

// texts runs a query on db and returns each row as text (the query selects
// one text column).
func texts(t *testing.T, b *testBundle, db queryer, sql string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(b.ctx, sql, args...)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return all
}

// historyFixture makes ended workflows of every kind a read shows: one that
// failed, was reattempted and received an event before it finished; a parent
// with two children, ended; one canceled by an operator while paused by an
// error. It returns their ids (the parent before its children).
func historyFixture(t *testing.T, b *testBundle) []int64 {
	t.Helper()
	b.setNow(t, t0)
	b.define(t, "Hist", `{"steps": [
		{"name": "a", "on_exception": {"action": "reattempt"}},
		{"name": "b", "await": {"event": "go", "timeout": "1 day"}}]}`)
	b.define(t, "Parent", `{"steps": [{"name": "spawn"}, {"name": "join", "await": {"children": "all", "timeout": "1 day"}}]}`)
	b.define(t, "Child", `{"steps": [{"name": "work"}]}`)
	b.define(t, "Pausing", `{"steps": [{"name": "x"}]}`)

	hist := b.create(t, "Hist", "1")
	b.fail(t, b.run(t, hist).ExecutionID, []string{"Boom"}, "first try")
	b.complete(t, b.run(t, hist).ExecutionID, "success", nil)
	var sent bool
	require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.send_event($1, 'go', '{"n": 1}')`, hist).Scan(&sent))
	require.True(t, sent)
	require.Equal(t, "finished", b.complete(t, b.run(t, hist).ExecutionID, "success", nil).WorkflowState)

	parent := b.create(t, "Parent", "2")
	spawn := b.run(t, parent)
	var children []int64
	for _, hero := range []string{"c1", "c2"} {
		var child int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('Child', 'User', $1, p_parent_id => $2)", hero, parent).Scan(&child))
		children = append(children, child)
	}
	b.complete(t, spawn.ExecutionID, "success", nil)
	for _, child := range children {
		require.Equal(t, "finished", b.complete(t, b.run(t, child).ExecutionID, "success", nil).WorkflowState)
	}
	require.Equal(t, "finished", b.complete(t, b.run(t, parent).ExecutionID, "success", nil).WorkflowState)

	pausing := b.create(t, "Pausing", "3")
	b.fail(t, b.run(t, pausing).ExecutionID, []string{"Fatal"}, "no luck")
	b.call(t, "cancel_workflow", pausing)

	b.setNow(t, t0.Add(time.Hour))
	return append([]int64{hist, parent}, append(children, pausing)...)
}

// historyReads is every read of a workflow that reads across history, as
// text, for the workflows ids: what a workflow's move must not change.
func historyReads(t *testing.T, b *testBundle, ids []int64) map[string][]string {
	t.Helper()
	reader := dbtest.NewConnAs(t, b.conf, dbtest.Reader)
	app := dbtest.NewConnAs(t, b.conf, dbtest.App)
	reads := map[string][]string{}
	add := func(name string, db queryer, sql string, args ...any) {
		reads[name] = append(reads[name], texts(t, b, db, sql, args...)...)
	}
	for _, id := range ids {
		add("get_workflow", app, "select geneva.get_workflow($1)::text", id)
		add("final_step_at", app, "select coalesce(geneva.final_step_at($1)::text, 'null')", id)
		add("step_history", app, "select e::text from geneva.step_history($1) e", id)
		add("get_step_execution", app,
			"select geneva.get_step_execution(e.id)::text from geneva.step_history($1) e order by e.id", id)
		// (as the owner: a reader may not call _final_step_at, the view's
		// final_step_at, and reads geneva.final_step_at instead)
		add("workflow_list", b.conn, "select l::text from geneva.workflow_list l where workflow_id = $1", id)
		add("workflow_timeline", reader, "select l::text from geneva.workflow_timeline l where workflow_id = $1", id)
		add("workflow_children", reader, "select l::text from geneva.workflow_children l where parent_id = $1", id)
		add("step_errors", reader, "select l::text from geneva.step_errors l where workflow_id = $1 order by execution_id", id)
		add("action_log", reader, "select l::text from geneva.action_log l where workflow_id = $1 order by action_id", id)
	}
	add("event_stats", reader, "select l::text from geneva.event_stats l order by workflow_type, event")
	add("workflow_list all", b.conn, "select l::text from geneva.workflow_list l order by workflow_id desc limit 3")
	for _, filter := range []string{
		`{}`, `{"error_class": "Boom"}`, `{"error_class": "Fatal"}`, `{"type": "Child"}`, `{"hero_id": "c2"}`,
		`{"state": "finished"}`, `{"state": "canceled"}`, `{"state": "ongoing"}`, `{"parent_id": ` + strconv.FormatInt(ids[1], 10) + `}`,
		`{"created_after": "2030-01-01T00:00:00Z"}`, `{"created_before": "2030-01-02T00:00:00Z", "before_id": ` + strconv.FormatInt(ids[3], 10) + `}`,
	} {
		add("list_workflows "+filter, b.conn, "select l::text from geneva.list_workflows($1::jsonb) l", filter)
		add("count_workflows "+filter, b.conn, "select l::text from geneva.count_workflows($1::jsonb) l", filter)
	}
	return reads
}

// TestHistoryReads: a workflow moved into history (docs/history.md) reads as
// it did live, through every function and view that shows a workflow, and
// the verbs treat it as the ended workflow it is.
func TestHistoryReads(t *testing.T) {
	t.Parallel()

	t.Run("ReadsTheSameAfterTheMove", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids := historyFixture(t, b)
		before := historyReads(t, b, ids)
		require.Len(t, before["get_workflow"], len(ids))
		require.Len(t, before["step_history"], 3+2+2+1) // a twice and b; spawn, join; each child's work; x
		require.NotEmpty(t, before["step_errors"])
		require.NotEmpty(t, before["workflow_children"])
		require.Len(t, before["list_workflows {}"], len(ids))

		require.ElementsMatch(t, ids, b.moveToHistory(t, ids...))
		var live, moved int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select (select count(*) from geneva.workflows), (select count(*) from geneva.workflows_history)").Scan(&live, &moved))
		require.Equal(t, []int{0, len(ids)}, []int{live, moved})

		after := historyReads(t, b, ids)
		for name, rows := range before {
			require.Equal(t, rows, after[name], name)
		}
	})

	// Half moved, half live: lists merge both, newest first, and page by id
	// across them; counts count both.
	t.Run("ListsLiveAndMovedTogether", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids := historyFixture(t, b)
		b.moveToHistory(t, ids[0])
		ongoing := b.create(t, "Hist", "4")
		var got []int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select array_agg(id) from geneva.list_workflows('{}', 100)").Scan(&got))
		require.Equal(t, []int64{ongoing, ids[4], ids[3], ids[2], ids[1], ids[0]}, got)
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select array_agg(id) from geneva.list_workflows(jsonb_build_object('before_id', $1::bigint), 2)", ids[1]).Scan(&got))
		require.Equal(t, []int64{ids[0]}, got)
		var n, newest int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select * from geneva.count_workflows('{}')").Scan(&n, &newest))
		require.Equal(t, []int64{6, ongoing}, []int64{n, newest})
		require.NoError(t, b.conn.QueryRow(b.ctx, `select * from geneva.count_workflows('{"state": "ongoing"}')`).Scan(&n, &newest))
		require.Equal(t, []int64{1, ongoing}, []int64{n, newest})
	})

	// workflow_timeline is never planned parallel (its comment: the workers
	// would start slower than one workflow's read), even where PostgreSQL is
	// told to run every query it may in a worker (force_parallel_mode,
	// debug_parallel_query from PostgreSQL 16); the same join without the
	// view is.
	t.Run("TimelineIsNotPlannedParallel", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids := historyFixture(t, b)
		b.moveToHistory(t, ids[0])
		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		defer tx.Rollback(b.ctx) //nolint:errcheck
		_, err = tx.Exec(b.ctx, `select set_config(name, 'on', true) from pg_settings
			where name in ('force_parallel_mode', 'debug_parallel_query')`)
		require.NoError(t, err)
		plan := func(sql string) string {
			rows := texts(t, b, tx, "explain "+sql, ids[0])
			return strings.Join(rows, "\n")
		}
		require.Contains(t, plan(`select * from geneva._step_executions_all e
			join geneva._workflows_all w on w.id = e.workflow_id and w.ended_on = e.ended_on where e.workflow_id = $1`), "Gather")
		require.NotContains(t, plan("select * from geneva.workflow_timeline where workflow_id = $1"), "Gather")
		require.NotContains(t, plan("select * from geneva.workflow_timeline where workflow_id <> $1"), "Gather")
	})

	// The verbs on a moved workflow answer as on an ended live one: 55000,
	// not P0002 (DESIGN.md: any operation on a finished workflow raises
	// 55000); send_event says false; retry_workflow makes a new run.
	t.Run("VerbsTreatAMovedWorkflowAsEnded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids := historyFixture(t, b)
		b.moveToHistory(t, ids...)
		hist, parent := ids[0], ids[1]

		for _, function := range []string{"pause_workflow", "resume_workflow", "cancel_workflow", "skip_step", "schedule_step"} {
			_, err := b.tryCall(function, hist)
			requireCode(t, err, "55000")
		}
		var sent bool
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.send_event($1, 'go')", hist).Scan(&sent))
		require.False(t, sent)
		_, err := b.conn.Exec(b.ctx, "select geneva.create_workflow('Child', 'User', 'c3', p_parent_id => $1)", parent)
		requireCode(t, err, "55000")

		// unknown ids are still unknown
		for _, sql := range []string{
			"select geneva.get_workflow(-1)", "select geneva.step_history(-1)", "select geneva.get_step_execution(-1)",
			"select geneva.final_step_at(-1)", "select geneva.cancel_workflow(-1)",
		} {
			_, err := b.conn.Exec(b.ctx, sql)
			requireCode(t, err, "P0002")
		}

		var retry int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.retry_workflow($1)", hist).Scan(&retry))
		var retriedFrom int64
		var next string
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select retried_from, next_step_name from geneva.workflows where id = $1", retry).Scan(&retriedFrom, &next))
		require.Equal(t, hist, retriedFrom)
		require.Equal(t, "a", next) // a finished workflow is retried from its first step
		_, err = b.conn.Exec(b.ctx, "select geneva.retry_workflow($1, 'b')", ids[4])
		requireCode(t, err, "22023") // Pausing has no step b
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.retry_workflow($1)", ids[4]).Scan(&retry))
		require.NoError(t, b.conn.QueryRow(b.ctx, "select next_step_name from geneva.workflows where id = $1", retry).Scan(&next))
		require.Equal(t, "x", next) // a canceled workflow is retried from the step it would have run
	})
}
