package tests

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

type bulkResult struct {
	Verb    string `json:"verb"`
	Matched int    `json:"matched"`
	Acted   int    `json:"acted"`
	Refused []struct {
		WorkflowID int64  `json:"workflow_id"`
		Code       string `json:"code"`
	} `json:"refused"`
	More     bool             `json:"more"`
	LastID   *int64           `json:"last_id"`
	ActionID int64            `json:"action_id"`
	Retries  map[string]int64 `json:"retries"`
}

func bulkOn(t *testing.T, b *testBundle, q queryer, verb, filter string, limit int) bulkResult {
	t.Helper()
	rows, err := q.Query(b.ctx, "select geneva.bulk_workflows($1, $2::jsonb, $3)", verb, filter, limit)
	require.NoError(t, err)
	var raw []byte
	for rows.Next() {
		require.NoError(t, rows.Scan(&raw))
	}
	require.NoError(t, rows.Err())
	var r bulkResult
	require.NoError(t, json.Unmarshal(raw, &r))
	return r
}

func (b *testBundle) statesCount(t *testing.T, workflowType string) map[string]int {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select state, count(*)::int from geneva.workflows where workflow_type = $1 group by state", workflowType)
	require.NoError(t, err)
	got := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		require.NoError(t, rows.Scan(&s, &n))
		got[s] = n
	}
	return got
}

func TestBulkWorkflows(t *testing.T) {
	t.Parallel()

	t.Run("PausesTenThousandInBatchesReportingRefusals", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		b.define(t, "Other", `{"steps": [{"name": "x"}]}`)
		_, err := b.conn.Exec(b.ctx, `select geneva.create_workflow('ThreeSteps', 'User', i::text) from generate_series(1, 10000) i`)
		require.NoError(t, err)
		_, err = b.conn.Exec(b.ctx, `select geneva.create_workflow('Other', 'User', '1')`)
		require.NoError(t, err)
		// every hundredth is paused already: pause refuses it
		_, err = b.conn.Exec(b.ctx, `select geneva.pause_workflow(id) from geneva.workflows
			where workflow_type = 'ThreeSteps' and id % 100 = 0`)
		require.NoError(t, err)
		start := b.lastActionID(t)

		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		setNowOn(t, operator, t0)
		var acted, refused, calls int
		filter := `{"type": "ThreeSteps"}`
		for {
			r := bulkOn(t, b, operator, "pause", filter, 3000)
			calls++
			acted += r.Acted
			refused += len(r.Refused)
			for _, x := range r.Refused {
				require.Equal(t, "55000", x.Code)
				require.Zero(t, x.WorkflowID%100)
			}
			if !r.More {
				break
			}
			filter = `{"type": "ThreeSteps", "after_id": ` + jsonInt(*r.LastID) + `}`
		}
		require.Equal(t, 4, calls)
		require.Equal(t, 9900, acted)
		require.Equal(t, 100, refused)
		require.Equal(t, map[string]int{"paused": 10000}, b.statesCount(t, "ThreeSteps"))
		require.Equal(t, map[string]int{"ready": 1}, b.statesCount(t, "Other"), "outside the filter")

		// one row per verb acted, each naming its bulk call, and one per call
		var perVerb, perCall, named int
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			select count(*) filter (where verb = 'pause_workflow'),
			  count(*) filter (where verb = 'bulk_workflows'),
			  count(*) filter (where verb = 'pause_workflow' and bulk_action_id in (
			    select action_id from geneva.action_log where verb = 'bulk_workflows'))
			from geneva.action_log where action_id > $1 and performed_by = $2`, start, string(dbtest.Operator)).Scan(&perVerb, &perCall, &named))
		require.Equal(t, 9900, perVerb)
		require.Equal(t, 4, perCall)
		require.Equal(t, 9900, named)
	})

	t.Run("FiltersAndVerbs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		var ids []int64
		for _, hero := range []string{"1", "2", "3", "4"} {
			var id int64
			require.NoError(t, b.conn.QueryRow(b.ctx,
				"select geneva.create_workflow('ThreeSteps', 'User', $1, p_group => $2)", hero, "g"+hero).Scan(&id))
			ids = append(ids, id)
		}
		b.setNow(t, t0.Add(hours(1)))
		// 3 fails in b and pauses
		b.complete(t, b.run(t, ids[2]).ExecutionID, "success", nil)
		b.setNow(t, t0.Add(hours(2)))
		b.fail(t, b.run(t, ids[2]).ExecutionID, []string{"*net.OpError"}, "down")

		r := bulkOn(t, b, b.conn, "cancel", `{"group": "g1"}`, 1000)
		require.Equal(t, 1, r.Acted)
		require.Equal(t, "canceled", b.workflow(t, ids[0]).State)

		r = bulkOn(t, b, b.conn, "retry", `{"error_class": "*net.OpError", "state": "paused"}`, 1000)
		require.Equal(t, 1, r.Acted)
		require.Contains(t, r.Retries, jsonInt(ids[2]))
		require.Equal(t, "canceled", b.workflow(t, ids[2]).State)
		require.Equal(t, "b", b.active(t, r.Retries[jsonInt(ids[2])]).StepName)

		r = bulkOn(t, b, b.conn, "skip", `{"step": "a", "state": "ongoing", "created_before": "2031-01-01T00:00:00Z"}`, 1000)
		require.Equal(t, 2, r.Acted, "2 and 4 (3's retry waits on b)")
		require.Equal(t, "b", deref(b.workflow(t, ids[1]).NextStepName))

		r = bulkOn(t, b, b.conn, "pause", `{"hero_type": "User", "created_after": "2031-01-01T00:00:00Z"}`, 1000)
		require.Zero(t, r.Matched)
		r = bulkOn(t, b, b.conn, "pause", `{"hero_id": "4", "up_to_id": `+jsonInt(ids[3])+`}`, 1000)
		require.Equal(t, 1, r.Acted)
		r = bulkOn(t, b, b.conn, "resume", `{"state": "paused"}`, 1000)
		require.Equal(t, 1, r.Acted)
		require.Equal(t, "ready", b.workflow(t, ids[3]).State)
	})

	// docs/security.md, by design: from SQL, an empty filter matches every
	// workflow (the command line asks for a --filter); those a verb cannot
	// take are refused, the others acted on.
	t.Run("AnEmptyFilterMatchesEveryWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		b.define(t, "Other", `{"steps": [{"name": "x"}]}`)
		b.define(t, "NoSteps", `{"steps": []}`)
		ready := b.create(t, "ThreeSteps", "1")
		var grouped int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('Other', 'Account', '2', p_group => 'acme')").Scan(&grouped))
		paused := b.create(t, "ThreeSteps", "3")
		b.call(t, "pause_workflow", paused)
		finished := b.create(t, "NoSteps", "4")
		require.Equal(t, "finished", b.workflow(t, finished).State)

		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		r := bulkOn(t, b, operator, "cancel", `{}`, 1000)
		require.Equal(t, 4, r.Matched, "every workflow, of every type, hero, group and state")
		require.Equal(t, 3, r.Acted)
		require.Len(t, r.Refused, 1)
		require.Equal(t, finished, r.Refused[0].WorkflowID)
		require.Equal(t, "55000", r.Refused[0].Code)
		for _, id := range []int64{ready, grouped, paused} {
			require.Equal(t, "canceled", b.workflow(t, id).State)
		}
	})

	t.Run("AValueIsDataThatMatchesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		newFilterWorld(t, b)
		for _, tc := range injections {
			if tc.code == "" {
				r := bulkOn(t, b, b.conn, "cancel", tc.filter, 1000)
				require.Zero(t, r.Matched, tc.filter)
			}
		}
		n, _ := countOf(t, b, b.conn, `{"state": "ongoing"}`)
		require.Equal(t, int64(5), n, "nothing canceled")
	})

	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		for statement, code := range map[string]string{
			"select geneva.bulk_workflows('explode', '{}')":                                "22023",
			"select geneva.bulk_workflows('pause', '{\"colour\": \"red\"}')":               "22023",
			"select geneva.bulk_workflows('pause', '[]')":                                  "22023",
			"select geneva.bulk_workflows('pause', '{\"state\": \"sleeping\"}')":           "22023",
			"select geneva.bulk_workflows('pause', '{\"type\": 5}')":                       "22023",
			"select geneva.bulk_workflows('pause', '{\"created_after\": \"not a time\"}')": "22023",
			"select geneva.bulk_workflows('pause', '{\"after_id\": \"x\"}')":               "22023",
			"select geneva.bulk_workflows('pause', '{}', 0)":                               "22023",
			"select geneva.bulk_workflows(null, '{}')":                                     "22004",
			"select geneva.bulk_workflows('pause', null)":                                  "22004",
			"select geneva.bulk_workflows('pause', '{}', null)":                            "22004",
			// a filter's values are bounded, as the log that records them
			// (issue 44, item 8)
			"select geneva.bulk_workflows('pause', jsonb_build_object('hero_id', repeat('x', 10000000)))": "22001",
			"select geneva.bulk_workflows('pause', jsonb_build_object('error_class', repeat('x', 1025)))": "22001",
		} {
			_, err := b.conn.Exec(b.ctx, statement)
			requireCode(t, err, code)
		}
		// the one workflow filter's refusals (geneva._workflow_filter), as
		// list_workflows and count_workflows have them
		for _, tc := range badFilters {
			_, err := b.conn.Exec(b.ctx, "select geneva.bulk_workflows('pause', $1::jsonb)", tc.filter)
			pgErr := requireCode(t, err, tc.code)
			require.Contains(t, pgErr.Message, tc.names)
		}
		for _, tc := range injections {
			if tc.code != "" {
				_, err := b.conn.Exec(b.ctx, "select geneva.bulk_workflows('pause', $1::jsonb)", tc.filter)
				requireCode(t, err, tc.code)
			}
		}
		require.Equal(t, "ready", b.workflow(t, id).State, "nothing written")
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.action_log where verb <> 'define_workflow'").Scan(&n))
		require.Zero(t, n, "nothing logged")
	})
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
