package tests

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// filterWorld is seven workflows that tell every key of the workflow filter
// (geneva._workflow_filter) apart: list_workflows, count_workflows and
// bulk_workflows are tested on it.
type filterWorld struct {
	// created at t0:
	ready  int64 // ThreeSteps User:1, group g1, at a
	paused int64 // ThreeSteps User:2, group g2, paused at a
	failed int64 // ThreeSteps Admin:3, paused by *net.OpError at b
	// created at t0 + 1 hour:
	canceled   int64 // Other User:4
	performing int64 // ThreeSteps User:5, running a
	finished   int64 // Other User:6
	twice      int64 // ThreeSteps User:7, paused by Timeout at a, then by Boom
}

func newFilterWorld(t *testing.T, b *testBundle) *filterWorld {
	t.Helper()
	b.setNow(t, t0)
	b.defineThreeSteps(t)
	b.define(t, "Other", `{"steps": [{"name": "x"}]}`)
	create := func(workflowType, heroType, heroID string, group *string) int64 {
		var id int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflow($1, $2, $3, p_group => $4)",
			workflowType, heroType, heroID, group).Scan(&id))
		return id
	}
	w := &filterWorld{}
	w.ready = create("ThreeSteps", "User", "1", ptr("g1"))
	w.paused = create("ThreeSteps", "User", "2", ptr("g2"))
	b.call(t, "pause_workflow", w.paused)
	w.failed = create("ThreeSteps", "Admin", "3", nil)
	b.complete(t, b.run(t, w.failed).ExecutionID, "success", nil)

	b.setNow(t, t0.Add(hours(1)))
	b.fail(t, b.run(t, w.failed).ExecutionID, []string{"*net.OpError"}, "down")
	w.canceled = create("Other", "User", "4", nil)
	b.call(t, "cancel_workflow", w.canceled)
	w.performing = create("ThreeSteps", "User", "5", nil)
	b.run(t, w.performing)
	w.finished = create("Other", "User", "6", nil)
	b.complete(t, b.run(t, w.finished).ExecutionID, "success", nil)
	w.twice = create("ThreeSteps", "User", "7", nil)
	b.fail(t, b.run(t, w.twice).ExecutionID, []string{"Timeout"}, "slow")
	b.call(t, "resume_workflow", w.twice)
	b.fail(t, b.run(t, w.twice).ExecutionID, []string{"Boom"}, "boom")

	for id, state := range map[int64]string{
		w.ready: "ready", w.paused: "paused", w.failed: "paused", w.canceled: "canceled",
		w.performing: "performing", w.finished: "finished", w.twice: "paused",
	} {
		require.Equal(t, state, b.workflow(t, id).State, "workflow %d", id)
	}
	return w
}

// filterCase is a filter and the workflows it matches, newest first.
type filterCase struct {
	name   string
	filter string
	want   []int64
}

// cases are filters of every key, each alone and some together.
func (w *filterWorld) cases() []filterCase {
	at := func(d time.Duration) string { return `"` + t0.Add(d).Format(time.RFC3339) + `"` }
	id := func(n int64) string { return jsonInt(n) }
	all := []int64{w.twice, w.finished, w.performing, w.canceled, w.failed, w.paused, w.ready}
	return []filterCase{
		{"Nothing", `{}`, all},
		{"Type", `{"type": "Other"}`, []int64{w.finished, w.canceled}},
		{"TypeUnknown", `{"type": "Nope"}`, nil},
		{"StateReady", `{"state": "ready"}`, []int64{w.ready}},
		{"StatePerforming", `{"state": "performing"}`, []int64{w.performing}},
		{"StatePaused", `{"state": "paused"}`, []int64{w.twice, w.failed, w.paused}},
		{"StateFinished", `{"state": "finished"}`, []int64{w.finished}},
		{"StateCanceled", `{"state": "canceled"}`, []int64{w.canceled}},
		{"StateOngoing", `{"state": "ongoing"}`, []int64{w.twice, w.performing, w.failed, w.paused, w.ready}},
		{"Step", `{"step": "b"}`, []int64{w.failed}},
		{"StepRunning", `{"step": "a", "state": "performing"}`, []int64{w.performing}},
		{"ErrorClass", `{"error_class": "*net.OpError"}`, []int64{w.failed}},
		{"ErrorClassLatestOnly", `{"error_class": "Timeout"}`, nil},
		{"ErrorClassLatest", `{"error_class": "Boom"}`, []int64{w.twice}},
		{"ErrorClassAndState", `{"error_class": "Boom", "state": "ready"}`, nil},
		{"HeroType", `{"hero_type": "Admin"}`, []int64{w.failed}},
		{"HeroID", `{"hero_id": "3"}`, []int64{w.failed}},
		{"Hero", `{"hero_type": "User", "hero_id": "1"}`, []int64{w.ready}},
		{"Group", `{"group": "g2"}`, []int64{w.paused}},
		{"CreatedBefore", `{"created_before": ` + at(hours(1)) + `}`, []int64{w.failed, w.paused, w.ready}},
		{"CreatedAfter", `{"created_after": ` + at(hours(1)) + `}`, []int64{w.twice, w.finished, w.performing, w.canceled}},
		{"CreatedBetween", `{"created_after": ` + at(-hours(1)) + `, "created_before": ` + at(time.Minute) + `}`, []int64{w.failed, w.paused, w.ready}},
		{"BeforeID", `{"before_id": ` + id(w.failed) + `}`, []int64{w.paused, w.ready}},
		{"AfterID", `{"after_id": ` + id(w.performing) + `}`, []int64{w.twice, w.finished}},
		{"UpToID", `{"up_to_id": ` + id(w.paused) + `}`, []int64{w.paused, w.ready}},
		{"Every", `{"type": "ThreeSteps", "state": "paused", "step": "a", "error_class": "Boom", "hero_type": "User",
			"hero_id": "7", "created_after": ` + at(0) + `, "after_id": ` + id(w.ready) + `, "up_to_id": ` + id(w.twice) + `}`,
			[]int64{w.twice}},
	}
}

// listIDs is the ids list_workflows returns for a filter, in its order.
func listIDs(t *testing.T, b *testBundle, q queryer, filter string, limit int) []int64 {
	t.Helper()
	rows, err := q.Query(b.ctx, "select id from geneva.list_workflows($1::jsonb, $2)", filter, limit)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	if len(ids) == 0 {
		return nil
	}
	return ids
}

// badFilters are filters every function of the workflow filter refuses,
// with the SQLSTATE and a word the message must have (the key).
var badFilters = []struct{ filter, code, names string }{
	{`[]`, "22023", "object"},
	{`"state"`, "22023", "object"},
	{`{"colour": "red"}`, "22023", "colour"},
	{`{"Type": "Other"}`, "22023", "Type"},
	{`{"type": 5}`, "22023", "type"},
	{`{"type": null}`, "22023", "type"},
	{`{"group": ["g1"]}`, "22023", "group"},
	{`{"state": "sleeping"}`, "22023", "state"},
	{`{"state": true}`, "22023", "state"},
	{`{"created_after": "not a time"}`, "22023", "created_after"},
	{`{"created_before": 1893456000}`, "22023", "created_before"},
	{`{"after_id": "1"}`, "22023", "after_id"},
	{`{"before_id": -1}`, "22023", "before_id"},
	{`{"up_to_id": 1.5}`, "22023", "up_to_id"},
	{`{"up_to_id": 1.0}`, "22023", "up_to_id"},
	{`{"after_id": 1234567890123456789012}`, "22023", "after_id"},
	{`{"hero_id": "` + strings.Repeat("x", 1025) + `"}`, "22001", "hero_id"},
	{`{"error_class": "` + strings.Repeat("é", 513) + `"}`, "22001", "error_class"},
	{`{"created_after": "` + strings.Repeat("9", 1025) + `"}`, "22001", "created_after"},
}

// injections are filters that try to make SQL of a key or a value: a key
// is refused, a value is data that matches nothing.
var injections = []struct{ filter, code string }{
	{`{"type = type or true --": "x"}`, "22023"},
	{`{"$1": "x"}`, "22023"},
	{`{"w.id > 0) or (true": 1}`, "22023"},
	{`{"state": "ready' or 'a' = 'a"}`, "22023"},
	{`{"state": "ongoing or true"}`, "22023"},
	{`{"after_id": "0 or true"}`, "22023"},
	{`{"created_before": "2040-01-01' or true --"}`, "22023"},
	{`{"type": "x' or 'a' = 'a"}`, ""},
	{`{"hero_id": "1'); delete from geneva.workflows; --"}`, ""},
	{`{"group": "%s %I %L $1 $2"}`, ""},
	{`{"error_class": "x' or true) or (true"}`, ""},
	{`{"step": "a\" or \"a\" = \"a"}`, ""},
}

func TestListWorkflows(t *testing.T) {
	t.Parallel()

	t.Run("FiltersByEveryKey", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w := newFilterWorld(t, b)
		for _, tc := range w.cases() {
			require.Equal(t, tc.want, listIDs(t, b, b.conn, tc.filter, 100), tc.name)
		}
	})

	t.Run("PagesNewestFirstByBeforeID", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w := newFilterWorld(t, b)
		var pages [][]int64
		filter := map[string]any{"type": "ThreeSteps"}
		for {
			encoded, err := json.Marshal(filter)
			require.NoError(t, err)
			page := listIDs(t, b, b.conn, string(encoded), 2)
			if len(page) == 0 {
				break
			}
			pages = append(pages, page)
			filter["before_id"] = page[len(page)-1]
		}
		require.Equal(t, [][]int64{{w.twice, w.performing}, {w.failed, w.paused}, {w.ready}}, pages)
	})

	t.Run("ReturnsTheWorkflowAndItsLatestError", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w := newFilterWorld(t, b)
		var (
			id                                    int64
			workflowType, heroType, heroID, state string
			next, group, class, message, step     *string
			createdAt                             time.Time
			pausedAt, errorAt                     *time.Time
		)
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			select id, workflow_type, hero_type, hero_id, state, next_step_name, group_name, created_at,
			  paused_at, last_error_class, last_error_message, last_error_step, last_error_at
			from geneva.list_workflows('{"hero_id": "7"}')`).Scan(&id, &workflowType, &heroType, &heroID, &state,
			&next, &group, &createdAt, &pausedAt, &class, &message, &step, &errorAt))
		require.Equal(t, w.twice, id)
		require.Equal(t, []string{"ThreeSteps", "User", "7", "paused", "a"}, []string{workflowType, heroType, heroID, state, deref(next)})
		require.Nil(t, group)
		require.True(t, createdAt.Equal(t0.Add(hours(1))), createdAt)
		require.NotNil(t, pausedAt)
		require.Equal(t, []string{"Boom", "boom", "a"}, []string{deref(class), deref(message), deref(step)})
		require.NotNil(t, errorAt)

		var groups []*string
		var classes []*string
		rows, err := b.conn.Query(b.ctx, `select group_name, last_error_class from geneva.list_workflows('{"state": "ongoing"}')`)
		require.NoError(t, err)
		for rows.Next() {
			var g, c *string
			require.NoError(t, rows.Scan(&g, &c))
			groups, classes = append(groups, g), append(classes, c)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []*string{nil, nil, nil, ptr("g2"), ptr("g1")}, groups)
		require.Equal(t, []*string{ptr("Boom"), nil, ptr("*net.OpError"), nil, nil}, classes)
	})

	t.Run("ValuesAreDataAndKeysAreChecked", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w := newFilterWorld(t, b)
		// a group with the characters of SQL matches exactly itself
		var quoted int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			`select geneva.create_workflow('Other', 'User', '8', p_group => $1)`, `o'brien"; --%s`).Scan(&quoted))
		require.Equal(t, []int64{quoted}, listIDs(t, b, b.conn, `{"group": "o'brien\"; --%s"}`, 100))

		for _, tc := range injections {
			_, err := b.conn.Exec(b.ctx, "select * from geneva.list_workflows($1::jsonb)", tc.filter)
			if tc.code != "" {
				requireCode(t, err, tc.code)
				continue
			}
			require.NoError(t, err, tc.filter)
			require.Nil(t, listIDs(t, b, b.conn, tc.filter, 100), tc.filter)
		}
		require.Len(t, listIDs(t, b, b.conn, `{}`, 100), 8, "nothing deleted")
		require.Equal(t, "paused", b.workflow(t, w.paused).State)
	})

	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, tc := range badFilters {
			_, err := b.conn.Exec(b.ctx, "select * from geneva.list_workflows($1::jsonb)", tc.filter)
			pgErr := requireCode(t, err, tc.code)
			require.Contains(t, pgErr.Message, tc.names, tc.filter[:min(len(tc.filter), 40)])
		}
		for statement, code := range map[string]string{
			"select * from geneva.list_workflows(null)":        "22004",
			"select * from geneva.list_workflows('{}', null)":  "22004",
			"select * from geneva.list_workflows('{}', 0)":     "22023",
			"select * from geneva.list_workflows('{}', 10001)": "22023",
		} {
			_, err := b.conn.Exec(b.ctx, statement)
			requireCode(t, err, code)
		}
		// an unknown key's hint lists the keys
		_, err := b.conn.Exec(b.ctx, `select * from geneva.list_workflows('{"colour": "red"}')`)
		pgErr := requireCode(t, err, "22023")
		require.Contains(t, pgErr.Hint, "type, state, step, error_class")
	})

	t.Run("AReaderMayList", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w := newFilterWorld(t, b)
		reader := dbtest.NewConnAs(t, b.conf, dbtest.Reader)
		require.Equal(t, []int64{w.twice, w.failed, w.paused}, listIDs(t, b, reader, `{"state": "paused"}`, 100))
	})
}
