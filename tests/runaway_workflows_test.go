package tests

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runawayRow is a row of geneva.runaway_workflows.
type runawayRow struct {
	WorkflowID   int64
	WorkflowType string
	State        string
	Executions   int64
	StepName     string
	Repeats      int
}

const runawaySQL = `select workflow_id, workflow_type, state, executions, step_name, repeats
	from geneva.runaway_workflows order by workflow_id`

func TestRunawayWorkflows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_runaway_executions => 6, p_runaway_repeats => 3)")
	require.NoError(t, err)
	b.define(t, "Poll", `{"steps": [{"name": "poll"}, {"name": "done"}]}`)
	b.define(t, "Long", `{"steps": [{"name": "s1"}, {"name": "s2"}, {"name": "s3"}, {"name": "s4"},
		{"name": "s5"}, {"name": "s6"}, {"name": "s7"}, {"name": "s8"}]}`)

	// a step reattempted 3 times: 4 executions of it in a row
	poll := b.create(t, "Poll", "p")
	for range 3 {
		b.complete(t, b.run(t, poll).ExecutionID, "reattempt", nil)
	}
	// 7 executions, each step once
	long := b.create(t, "Long", "l")
	for range 6 {
		b.complete(t, b.run(t, long).ExecutionID, "success", nil)
	}
	// under both thresholds: 3 in a row, 6 executions
	calm := b.create(t, "Poll", "c")
	for range 2 {
		b.complete(t, b.run(t, calm).ExecutionID, "reattempt", nil)
	}
	calmLong := b.create(t, "Long", "m")
	for range 5 {
		b.complete(t, b.run(t, calmLong).ExecutionID, "success", nil)
	}

	// housekeeping flags; the view lists nothing it did not flag
	require.Empty(t, viewRows[runawayRow](t, b, runawaySQL))
	var flagged int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select (geneva.housekeep()->>'runaways_flagged')::int").Scan(&flagged))
	require.Equal(t, 2, flagged)
	require.Equal(t, []runawayRow{
		{WorkflowID: poll, WorkflowType: "Poll", State: "ready", Executions: 4, StepName: "poll", Repeats: 4},
		{WorkflowID: long, WorkflowType: "Long", State: "ready", Executions: 7, StepName: "s7", Repeats: 1},
	}, viewRows[runawayRow](t, b, runawaySQL))

	// the round read only what was inserted since the last: its mark is the
	// newest execution, and a round with nothing new flags nothing
	var mark, newest int64
	require.NoError(t, b.conn.QueryRow(b.ctx, `select (select runaway_checked_id from geneva.housekeeping_rounds),
		(select max(id) from geneva.step_executions)`).Scan(&mark, &newest))
	require.Equal(t, newest, mark)
	require.NoError(t, b.conn.QueryRow(b.ctx, "select (geneva.housekeep()->>'runaways_flagged')::int").Scan(&flagged))
	require.Zero(t, flagged)

	// flagged, never stopped: the workflows run on, and the view counts
	// what they have now
	b.complete(t, b.run(t, poll).ExecutionID, "reattempt", nil)
	b.complete(t, b.run(t, long).ExecutionID, "success", nil)
	rows := viewRows[runawayRow](t, b, runawaySQL)
	require.Len(t, rows, 2)
	require.Equal(t, runawayRow{WorkflowID: poll, WorkflowType: "Poll", State: "ready", Executions: 5, StepName: "poll", Repeats: 5}, rows[0])
	require.Equal(t, int64(8), rows[1].Executions)

	// the calm ones cross a threshold on their next execution, and the next
	// round flags them
	b.complete(t, b.run(t, calm).ExecutionID, "reattempt", nil)
	b.complete(t, b.run(t, calmLong).ExecutionID, "success", nil)
	require.NoError(t, b.conn.QueryRow(b.ctx, "select (geneva.housekeep()->>'runaways_flagged')::int").Scan(&flagged))
	require.Equal(t, 2, flagged)
	require.Len(t, viewRows[runawayRow](t, b, runawaySQL), 4)

	// an ended workflow is not listed
	_, err = b.conn.Exec(b.ctx, "select geneva.cancel_workflow($1)", calm)
	require.NoError(t, err)
	require.Len(t, viewRows[runawayRow](t, b, runawaySQL), 3)

	// raised thresholds hide the flagged workflows at once
	_, err = b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_runaway_executions => 1000, p_runaway_repeats => 100)")
	require.NoError(t, err)
	require.Empty(t, viewRows[runawayRow](t, b, runawaySQL))

	// the engine's metric counts the listed ones per type
	_, err = b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_runaway_executions => 7)")
	require.NoError(t, err)
	type sample struct {
		WorkflowType string
		Value        float64
	}
	require.Equal(t, []sample{{"Long", 1}}, viewRows[sample](t, b,
		"select workflow_type, value from geneva.engine_metrics where metric = 'runaway_workflows' order by workflow_type"))

	// the flags are housekeeping's alone
	_, err = b.conn.Exec(b.ctx, "insert into geneva.runaways values ($1, now())", calm)
	requireCode(t, err, "55000")
	_, err = b.conn.Exec(b.ctx, "delete from geneva.runaways")
	requireCode(t, err, "55000")
	_, err = b.conn.Exec(b.ctx, "truncate geneva.runaways")
	requireCode(t, err, "55000")
}

func TestRunawaySettings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var executions, repeats int
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select runaway_executions, runaway_repeats from geneva.get_housekeeping_settings()").Scan(&executions, &repeats))
	require.Equal(t, 1000, executions)
	require.Equal(t, 100, repeats)
	for _, args := range []string{"p_runaway_executions => 0", "p_runaway_repeats => -1"} {
		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings("+args+")")
		requireCode(t, err, "22023")
	}
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select runaway_executions, runaway_repeats from geneva.set_housekeeping_settings(p_runaway_repeats => 20)").Scan(&executions, &repeats))
	require.Equal(t, 1000, executions)
	require.Equal(t, 20, repeats)
}

// docs/operating.md's runaway example runs: its settings flag a step
// reattempted 20 times (21 in a row), and its query lists it.
func TestRunawayDocsExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/operating.md")
	require.NoError(t, err)
	text := string(doc)
	start := strings.Index(text, "**Runaway chains.**")
	require.GreaterOrEqual(t, start, 0)
	block := text[start:]
	block = block[strings.Index(block, "```sql\n")+len("```sql\n"):]
	block = block[:strings.Index(block, "```")]
	statements := strings.Split(strings.ReplaceAll(block, "\n  ", "\n"), ";\n")
	require.Len(t, statements, 3, "two statements and the end")

	b := setup(t)
	_, err = b.conn.Exec(b.ctx, statements[0])
	require.NoError(t, err)
	b.define(t, "Poll", `{"steps": [{"name": "poll"}, {"name": "done"}]}`)
	poll := b.create(t, "Poll", "p")
	for range 20 {
		b.complete(t, b.run(t, poll).ExecutionID, "reattempt", nil)
	}
	calm := b.create(t, "Poll", "q")
	for range 19 {
		b.complete(t, b.run(t, calm).ExecutionID, "reattempt", nil)
	}
	_, err = b.conn.Exec(b.ctx, "select geneva.housekeep()")
	require.NoError(t, err)
	type row struct {
		WorkflowID   int64
		WorkflowType string
		Executions   int64
		StepName     string
		Repeats      int
	}
	require.Equal(t, []row{{poll, "Poll", 21, "poll", 21}}, viewRows[row](t, b, statements[1]))
}
